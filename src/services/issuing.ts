/**
 * What a finalize reads from the organization, once (docs/architecture.md "A straight finalize"): the
 * mode's settings (tax profile, branding, SII sending) and the organization's name, and from them the
 * issuer as documents store it (services/issued-parties.ts). document-lifecycle.ts loads it in the
 * finalize transaction (the billing run's batch once per organization, mode and document type) and
 * hands it down: numbering.ts decides the series with it (numberingPlan adds the document type's
 * agency and the mode's certificates, read once), tax-documents.ts builds and signs the DTE, cafs.ts
 * takes the folio. None of them reads the organization again.
 */
import type { IssuedIssuer } from "../domain/issued-parties.js";
import { readIssuer } from "./issued-parties.js";
import type { OrganizationSettings } from "./organization-settings.js";
import { tenant, type ServiceContext, type TenantKey, type Tx } from "./context.js";

/** A finalize's view of its organization and mode, read once at its start. */
export interface Issuing {
  /** the finalize transaction: everything issued is written in it */
  tx: Tx;
  /** the organization and mode the documents are issued in */
  owner: TenantKey;
  /** the finalize's time: `finalizedAt`, the DTE's timestamp (TmstFirma), the certificate's validity */
  now: Date;
  /** CERTIFICATE_ENCRYPTION_KEY: opens the signing certificate and the CAFs' private keys (undefined: none set) */
  encryptionKey: Buffer | undefined;
  /** the mode's settings (services/organization-settings.ts): the tax profile's RUT, `siiSending` */
  settings: OrganizationSettings;
  /** the issuer every document of this finalize stores as its snapshot, and its DTE's Emisor */
  issuer: IssuedIssuer;
}

/**
 * The Issuing of a finalize by `ctx`'s organization and mode in transaction `tx`: two statements (the
 * organization's name and the settings row: issued-parties.ts readIssuer), read inside `tx` so the snapshot
 * commits with the finalize.
 */
export async function loadIssuing(tx: Tx, ctx: ServiceContext): Promise<Issuing> {
  const owner = tenant(ctx);
  const { settings, issuer } = await readIssuer(tx, owner);
  return { tx, owner, now: ctx.now(), encryptionKey: ctx.settings.certificateEncryptionKey, settings, issuer };
}
