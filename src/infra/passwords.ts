/**
 * Password hashing of dashboard members (docs/dashboard.md "Members and sign-in"): argon2id through
 * `@node-rs/argon2` (Rust, prebuilt binaries shipped as optional dependencies, so it loads without install scripts,
 * which .npmrc turns off; the `argon2` package's prebuilt binary crashed on this project's machines). Parameters:
 * OWASP's first recommendation for argon2id, 19 MiB of memory, 2 passes, 1 lane (about 25-80 ms a hash here). The
 * hash is a PHC string (`$argon2id$v=19$m=19456,t=2,p=1$...`) that carries its own parameters, so hashes made with
 * other parameters still verify.
 */
import { hash, verify, type Algorithm } from "@node-rs/argon2";

/** argon2id in `@node-rs/argon2`'s Algorithm enum (a const enum its typings declare; not importable as a value). */
const ARGON2ID = 2 as Algorithm;

/** The parameters of new hashes. */
export const PASSWORD_HASH_OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** The argon2id hash (PHC string) of `password`, with a fresh random salt. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS);
}

/** True when `password` matches `passwordHash` (a PHC string of hashPassword); false for a malformed hash. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let decoy: Promise<string> | undefined;

/**
 * Spends the time of one verification against a hash nobody's password matches: sign-in calls it for an e-mail
 * that has no password, so an unknown e-mail answers in about the time a wrong password does (no enumeration by
 * timing).
 */
export async function verifyDecoy(password: string): Promise<false> {
  decoy ??= hashPassword(`decoy:${Math.random()}`);
  await verifyPassword(await decoy, password);
  return false;
}
