/**
 * The dashboard's team members (docs/dashboard.md "Members and sign-in"): invitations (a one-time link, 7 days),
 * accepting one (choosing a password, which signs in), signing in with e-mail and password (argon2id, failures
 * limited per e-mail and per client address), sessions held in an HttpOnly cookie with a CSRF token (both stored as
 * SHA-256 hashes, ending after 12 hours idle or at sign-out), and the admin's list, role changes and removals.
 * Rules: domain/members.ts.
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import type { PrismaClient } from "../infra/prisma/generated/client.js";
import type { AppSettings } from "../infra/config.js";
import type { Mailer } from "../infra/mail.js";
import type { Logger } from "../infra/logger.js";
import { newId, randomSecret } from "../infra/ids.js";
import { hashPassword, verifyDecoy, verifyPassword } from "../infra/passwords.js";
import type { SignInLimits } from "../infra/rate-limit.js";
import {
  AuthenticationError,
  FieldErrorCollector,
  InvalidStateError,
  NotFoundError,
  PermissionError,
  RateLimitedError,
  ValidationError,
} from "../domain/errors.js";
import { isEmailAddress } from "../domain/formats.js";
import { isOrganizationId } from "../domain/api-keys.js";
import {
  dashboardMode,
  DASHBOARD_CSRF_HEADER,
  DASHBOARD_MODE_HEADER,
  inviteExpiresAt,
  inviteLink,
  inviteMessage,
  isMemberRole,
  isMemberSecret,
  MEMBER_ROLES,
  MEMBER_SECRET_LENGTH,
  normalizeEmail,
  passwordProblem,
  sessionExpired,
  sessionExpiresAt,
  sessionTouchIsStale,
  SESSION_TOUCH_RESOLUTION_MS,
  type MemberRole,
} from "../domain/members.js";
import { hashKey } from "./api-keys.js";
import { claimedOnCreate, deliverClaimed } from "./outbox.js";
import { atomically, type Auth, type ServiceContext } from "./context.js";

/** The OutboxMessage kind of an invitation e-mail. */
export const MEMBER_INVITE_MESSAGE_KIND = "member_invite";

/** Longest member name (characters). */
export const MAX_MEMBER_NAME_LENGTH = 200;

/** A member as the API shows it: never the password's hash. */
export interface MemberView {
  id: string;
  organizationId: string;
  email: string;
  name: string;
  role: MemberRole;
  createdAt: Date;
  lastSignInAt: Date | null;
  /** true until the member accepts an invitation and chooses a password */
  invitationPending: boolean;
}

const MEMBER_SELECT = {
  id: true,
  organizationId: true,
  email: true,
  name: true,
  role: true,
  createdAt: true,
  lastSignInAt: true,
  passwordHash: true,
} as const;

type MemberRow = {
  id: string;
  organizationId: string;
  email: string;
  name: string;
  role: string;
  createdAt: Date;
  lastSignInAt: Date | null;
  passwordHash: string | null;
};

function memberView(row: MemberRow): MemberView {
  return {
    id: row.id,
    organizationId: row.organizationId,
    email: row.email,
    name: row.name,
    role: row.role as MemberRole,
    createdAt: row.createdAt,
    lastSignInAt: row.lastSignInAt,
    invitationPending: row.passwordHash === null,
  };
}

/**
 * The organization named by `organization`: an id (`org_...`) or an exact name. NotFoundError when none has it;
 * ValidationError on `organization` when several organizations have that name (name one by its id).
 */
export async function findOrganization(
  prisma: PrismaClient,
  organization: string,
): Promise<{ id: string; name: string }> {
  const wanted = organization.trim();
  if (!wanted) throw ValidationError.field("organization", "is required");
  const where = isOrganizationId(wanted) ? { id: wanted } : { name: wanted };
  const found = await prisma.organization.findMany({ where, select: { id: true, name: true }, take: 10 });
  if (!found.length) throw new NotFoundError("organization", wanted);
  if (found.length > 1)
    throw ValidationError.field(
      "organization",
      `${found.length} organizations are named ${JSON.stringify(wanted)} ` +
        `(${found.map((o) => o.id).join(", ")}): name one by its org_ id`,
    );
  return found[0];
}

/** What inviting needs besides the database: where links point and how mail goes. */
export interface InviteDeps {
  prisma: PrismaClient;
  settings: AppSettings;
  /** PUBLIC_URL, else the request's origin: the link's base */
  baseUrl: string;
  now: Date;
  /** sends the e-mail right after commit (a request); absent: a server's outbox worker sends it (the CLI) */
  mailer?: Mailer | null;
  logger?: Logger;
}

/** An invitation made: the member (new, or the pending one invited again) and its one-time link. */
export interface MemberInvitation {
  member: MemberView;
  /** `<base>/dashboard/invite/<token>`: shown once, only the token's hash is stored */
  link: string;
  expiresAt: Date;
  /** true when an e-mail with the link was queued in the outbox (SMTP is configured) */
  emailQueued: boolean;
}

/** The checked input of an invitation; ValidationError naming each bad field. */
function checkedInvite(input: { email: string; name?: string | null; role: string }) {
  const errors = new FieldErrorCollector();
  const email = normalizeEmail(input.email ?? "");
  if (!isEmailAddress(email)) errors.add("email", "must be an e-mail address");
  if (!isMemberRole(input.role)) errors.add("role", `must be one of ${MEMBER_ROLES.join(", ")}`);
  const name = (input.name ?? "").trim() || email.split("@")[0];
  if ([...name].length > MAX_MEMBER_NAME_LENGTH)
    errors.add("name", `must be at most ${MAX_MEMBER_NAME_LENGTH} characters`);
  errors.throwIfAny("Cannot invite member");
  return { email, name, role: input.role as MemberRole };
}

/**
 * Invites `email` to organization `organizationId` as `role` (admin, finance or viewer; `name` defaults to the
 * e-mail's local part), in one transaction: a new member without password, or the member of that e-mail who has not
 * accepted yet (its name and role updated, its earlier links voided), and a one-time link valid 7 days. With SMTP
 * configured, the link is also e-mailed through the outbox (kind `member_invite`). ValidationError (400) for a bad
 * e-mail, role or name; InvalidStateError (409) when the e-mail already belongs to a member who chose a password.
 */
export async function inviteMember(
  deps: InviteDeps,
  organizationId: string,
  input: { email: string; name?: string | null; role: string },
): Promise<MemberInvitation> {
  const { email, name, role } = checkedInvite(input);
  const { prisma, now } = deps;
  const token = randomSecret(MEMBER_SECRET_LENGTH);
  const expiresAt = inviteExpiresAt(now);
  const link = inviteLink(deps.baseUrl, token);
  const mail = Boolean(deps.settings.smtpUrl || deps.mailer);
  const { member, messageId } = await prisma.$transaction(async (tx) => {
    const organization = await tx.organization.findUnique({ where: { id: organizationId }, select: { name: true } });
    if (!organization) throw new NotFoundError("organization", organizationId);
    const existing = await tx.member.findUnique({ where: { organizationId_email: { organizationId, email } } });
    if (existing?.passwordHash)
      throw new InvalidStateError(`${email} is already a member of this organization (${existing.id})`);
    const member = existing
      ? await tx.member.update({ where: { id: existing.id }, data: { name, role }, select: MEMBER_SELECT })
      : await tx.member.create({
          data: { id: newId("mem"), organizationId, email, name, role, createdAt: now },
          select: MEMBER_SELECT,
        });
    // only the newest link works
    await tx.memberInvite.updateMany({ where: { memberId: member.id, usedAt: null }, data: { usedAt: now } });
    await tx.memberInvite.create({
      data: {
        id: newId("miv"),
        organizationId,
        memberId: member.id,
        tokenHash: hashKey(token),
        expiresAt,
        createdAt: now,
      },
    });
    if (!mail) return { member, messageId: null };
    const message = inviteMessage(organization.name, role, link, expiresAt);
    const id = randomUUID();
    await tx.outboxMessage.create({
      data: {
        id,
        organizationId,
        kind: MEMBER_INVITE_MESSAGE_KIND,
        recipients: [email],
        ...message,
        // a request sends it right after commit, else a server's outbox worker does
        ...(deps.mailer ? claimedOnCreate(now) : { status: "pending", nextAttemptAt: now }),
      },
    });
    return { member, messageId: id };
  });
  if (messageId && deps.mailer && deps.logger)
    await deliverClaimed(
      { prisma, mailer: deps.mailer, logger: deps.logger, settings: deps.settings },
      { id: messageId, attempts: 1 },
      now,
    );
  return { member: memberView(member), link, expiresAt, emailQueued: messageId !== null };
}

/** A new session's secrets (shown once: the cookies' values) and its member. */
export interface SignedIn {
  secret: string;
  csrfToken: string;
  member: MemberView;
}

/**
 * Starts a session of `memberId` in transaction `tx`: its hashed secret and CSRF token, expiring 12 hours idle; sets
 * the member's lastSignInAt; deletes every session that has ended (expired or signed out, of any organization), so
 * they never pile up.
 */
async function startSession(
  tx: Pick<PrismaClient, "memberSession" | "member">,
  member: MemberRow,
  now: Date,
): Promise<SignedIn> {
  const secret = randomSecret(MEMBER_SECRET_LENGTH);
  const csrfToken = randomSecret(MEMBER_SECRET_LENGTH);
  await tx.memberSession.deleteMany({ where: { OR: [{ expiresAt: { lte: now } }, { revokedAt: { not: null } }] } });
  await tx.memberSession.create({
    data: {
      id: newId("mse"),
      organizationId: member.organizationId,
      memberId: member.id,
      tokenHash: hashKey(secret),
      csrfHash: hashKey(csrfToken),
      lastSeenAt: now,
      expiresAt: sessionExpiresAt(now),
      createdAt: now,
    },
  });
  const updated = await tx.member.update({
    where: { id: member.id },
    data: { lastSignInAt: now },
    select: MEMBER_SELECT,
  });
  return { secret, csrfToken, member: memberView(updated) };
}

const INVITE_REFUSED = "This invitation link is unknown, already used or expired: ask an admin for a new one";

/**
 * Accepts an invitation: `password` becomes the member's (argon2id) and the member is signed in, in one
 * transaction that also marks the link used, so a link works once. ValidationError on `password` (400) when it
 * breaks the policy (at least 12 characters), checked before the link is spent; AuthenticationError (401) when the
 * token is malformed, unknown, used or expired (all alike).
 */
export async function acceptInvite(
  prisma: PrismaClient,
  token: string,
  password: unknown,
  now: Date,
): Promise<SignedIn> {
  const problem = passwordProblem(password);
  if (problem) throw ValidationError.field("password", problem);
  if (!isMemberSecret(token)) throw new AuthenticationError(INVITE_REFUSED);
  const invite = await prisma.memberInvite.findUnique({ where: { tokenHash: hashKey(token) } });
  if (!invite || invite.usedAt || invite.expiresAt.getTime() <= now.getTime())
    throw new AuthenticationError(INVITE_REFUSED);
  const passwordHash = await hashPassword(password as string);
  return prisma.$transaction(async (tx) => {
    // spent here, guarded: of two concurrent acceptances one finds it used
    const spent = await tx.memberInvite.updateMany({
      where: { id: invite.id, usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    if (!spent.count) throw new AuthenticationError(INVITE_REFUSED);
    const member = await tx.member.update({
      where: { id: invite.memberId },
      data: { passwordHash },
      select: MEMBER_SELECT,
    });
    return startSession(tx, member, now);
  });
}

const SIGN_IN_REFUSED = "Wrong e-mail or password";

/**
 * Signs a member in with `email` and `password`. `organizationId` picks the membership when the e-mail belongs to
 * several organizations; without it the oldest membership whose password matches is used. Failures are counted
 * per e-mail and per client `address` (`limits`): past either limit every attempt answers RateLimitedError (429,
 * with the seconds to wait) before the password is checked. A wrong password and an unknown e-mail (or one that
 * has not accepted its invitation) both answer the same AuthenticationError (401), in about the same time (a decoy
 * hash is verified). ValidationError (400) names a missing e-mail or password.
 */
export async function signIn(
  prisma: PrismaClient,
  limits: SignInLimits,
  input: { email: unknown; password: unknown; organizationId?: unknown },
  address: string,
  now: Date,
): Promise<SignedIn> {
  const errors = new FieldErrorCollector();
  if (typeof input.email !== "string" || !input.email.trim()) errors.add("email", "is required");
  if (typeof input.password !== "string" || !input.password) errors.add("password", "is required");
  const organizationId = input.organizationId ?? undefined;
  if (organizationId !== undefined && !(typeof organizationId === "string" && isOrganizationId(organizationId)))
    errors.add("organization", "must be an organization id (org_...)");
  errors.throwIfAny("Cannot sign in");
  const email = normalizeEmail(input.email as string).slice(0, 320);
  const password = (input.password as string).slice(0, 1000);
  const refusal = await limits.check(email, address);
  if (refusal)
    throw new RateLimitedError(
      `Too many failed sign-ins; retry in ${refusal.retryAfterSeconds} s.`,
      refusal.retryAfterSeconds,
    );
  const candidates = await prisma.member.findMany({
    where: {
      email,
      passwordHash: { not: null },
      ...(organizationId ? { organizationId: organizationId as string } : {}),
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: MEMBER_SELECT,
    take: 20,
  });
  let matched: MemberRow | null = null;
  for (const candidate of candidates)
    if (await verifyPassword(candidate.passwordHash!, password)) {
      matched = candidate;
      break;
    }
  if (!candidates.length) await verifyDecoy(password);
  if (!matched) {
    await limits.recordFailure(email, address);
    throw new AuthenticationError(SIGN_IN_REFUSED);
  }
  await limits.reset(email);
  const member = matched;
  return prisma.$transaction((tx) => startSession(tx, member, now));
}

const sameDigest = (a: string, b: string) => timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"));

/**
 * Resolves a dashboard session's secret (the cookie) to the member's Auth: the member's organization, the mode of
 * `modeHeader` (X-Dashboard-Mode: test, the default, or live; ValidationError on it otherwise), the member's e-mail
 * as `userEmail` (written as `user` on documents) and `member`. AuthenticationError (401) when the secret is
 * malformed or unknown, the session was signed out or has been idle 12 hours; PermissionError (403) when `csrf`
 * (X-Dashboard-CSRF) is not the session's CSRF token. Writes the session's last use (and its new expiry) at most
 * once a minute.
 */
export async function authenticateMember(
  prisma: PrismaClient,
  secret: string | undefined,
  csrf: string | null | undefined,
  modeHeader: string | null | undefined,
  now: Date,
): Promise<Auth> {
  const ended = () => new AuthenticationError("The dashboard session has ended: sign in again");
  if (!isMemberSecret(secret)) throw ended();
  const session = await prisma.memberSession.findUnique({
    where: { tokenHash: hashKey(secret) },
    include: { member: { select: { email: true, role: true } } },
  });
  if (!session || session.revokedAt || sessionExpired(session.expiresAt, now)) throw ended();
  const given = createHash("sha256")
    .update(csrf ?? "")
    .digest("hex");
  if (!csrf || !sameDigest(given, session.csrfHash))
    throw new PermissionError(
      `Requests with the dashboard session must carry its ${DASHBOARD_CSRF_HEADER} header (the dashboard_csrf cookie)`,
    );
  const mode = dashboardMode(modeHeader);
  if ("error" in mode) throw ValidationError.field(DASHBOARD_MODE_HEADER, mode.error);
  if (sessionTouchIsStale(session.lastSeenAt, now)) {
    const cutoff = new Date(now.getTime() - SESSION_TOUCH_RESOLUTION_MS);
    await prisma.memberSession.updateMany({
      where: { id: session.id, lastSeenAt: { lt: cutoff }, revokedAt: null },
      data: { lastSeenAt: now, expiresAt: sessionExpiresAt(now) },
    });
  }
  return {
    organizationId: session.organizationId,
    testMode: mode.testMode,
    userEmail: session.member.email,
    apiKeyId: "",
    member: { memberId: session.memberId, role: session.member.role as MemberRole, sessionId: session.id },
  };
}

/**
 * Ends the caller's dashboard session now (sign-out): its cookie answers 401 from the next request on, whatever
 * the browser keeps. PermissionError (403) for a caller that is not a member session.
 */
export async function signOutMember(ctx: Pick<ServiceContext, "prisma" | "auth" | "now">): Promise<void> {
  const member = ctx.auth.member;
  if (!member) throw new PermissionError("Only a dashboard member's session can sign out");
  await ctx.prisma.memberSession.updateMany({
    where: { id: member.sessionId, revokedAt: null },
    data: { revokedAt: ctx.now() },
  });
}

/** The members of the caller's organization, oldest first. */
export async function listMembers(ctx: Pick<ServiceContext, "prisma" | "auth">): Promise<MemberView[]> {
  const rows = await ctx.prisma.member.findMany({
    where: { organizationId: ctx.auth.organizationId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: MEMBER_SELECT,
  });
  return rows.map(memberView);
}

/** The member signed in (null for an API key). */
export async function currentMember(ctx: Pick<ServiceContext, "prisma" | "auth">): Promise<MemberView | null> {
  const member = ctx.auth.member;
  if (!member) return null;
  const row = await ctx.prisma.member.findUnique({ where: { id: member.memberId }, select: MEMBER_SELECT });
  return row && memberView(row);
}

/**
 * Locks the caller's organization's member `id` and its admins (FOR UPDATE, until `tx` ends), so concurrent changes
 * of roles cannot leave the organization without an admin. NotFoundError when the organization has no such member.
 */
async function lockMembers(
  tx: Pick<PrismaClient, "$queryRaw">,
  organizationId: string,
  id: string,
): Promise<{ target: { id: string; role: string }; admins: number }> {
  const rows = await tx.$queryRaw<{ id: string; role: string }[]>`
    SELECT "id", "role" FROM "Member"
    WHERE "organizationId" = ${organizationId} AND ("id" = ${id} OR "role" = 'admin')
    ORDER BY "id" FOR UPDATE`;
  const target = rows.find((r) => r.id === id);
  if (!target) throw new NotFoundError("member", id);
  return { target, admins: rows.filter((r) => r.role === "admin").length };
}

const LAST_ADMIN = "The organization's last admin cannot be removed or lose the admin role: make another member admin";

/**
 * Changes member `id`'s role, in one transaction. ValidationError on `role` for an unknown role; NotFoundError for
 * another organization's or an unknown member; InvalidStateError (409) when it would leave no admin. The member's
 * open sessions take the new role from their next request.
 */
export async function updateMemberRole(ctx: ServiceContext, id: string, role: string): Promise<MemberView> {
  if (!isMemberRole(role)) throw ValidationError.field("role", `must be one of ${MEMBER_ROLES.join(", ")}`);
  return atomically(ctx, async ({ prisma: tx }) => {
    const { target, admins } = await lockMembers(tx, ctx.auth.organizationId, id);
    if (target.role === "admin" && role !== "admin" && admins <= 1) throw new InvalidStateError(LAST_ADMIN);
    return memberView(await tx.member.update({ where: { id }, data: { role }, select: MEMBER_SELECT }));
  });
}

/**
 * Removes member `id` of the caller's organization, in one transaction: the row, its invitations and its sessions
 * (which answer 401 from the next request on). Documents keep the e-mail as their `user`. NotFoundError for another
 * organization's or an unknown member; InvalidStateError (409) for the last admin.
 */
export async function removeMember(ctx: ServiceContext, id: string): Promise<MemberView> {
  return atomically(ctx, async ({ prisma: tx }) => {
    const { target, admins } = await lockMembers(tx, ctx.auth.organizationId, id);
    if (target.role === "admin" && admins <= 1) throw new InvalidStateError(LAST_ADMIN);
    return memberView(await tx.member.delete({ where: { id }, select: MEMBER_SELECT }));
  });
}
