/**
 * The settings page (`#/settings`, admins; loaded on demand: its own script), each part of the current mode (test or
 * live, the toggle's): the portal's branding (`organizationBranding`, `updateOrganizationBranding`) with a live
 * preview of the colours the portal will paint (portalColors of src/domain/portal.ts, the portal's own rule: a
 * colour too faint against the background is replaced); the SII tax profile (`taxProfile`, `updateTaxProfile`,
 * what SII still needs in `missing`); the signing certificates (`certificates`, `uploadCertificate`) and the CAFs
 * (`cafs`, `uploadCaf`) with their folios used and left, a CAF with fewer than 10 % left flagged; and a link to the
 * members page. Errors are the API's, naming the field.
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { gql } from "@urql/core";
import { useQuery } from "@urql/preact";
import { portalColors } from "../../../src/domain/portal.js";
import { client, errorMessage } from "./api.js";
import {
  AdminOnly,
  cafRunningOut,
  DateText,
  DateTimeText,
  Message,
  nodes,
  Pending,
  Section,
  Table,
  usePage,
  type Edges,
} from "./ui.js";

type Outcome = { ok: boolean; text: string } | null;

/** A mutation: null when it succeeded, else the API's message (which names the field). */
async function save(query: string, variables: Record<string, unknown>): Promise<string | null> {
  const result = await client.mutation(query, variables).toPromise();
  return result.error ? errorMessage(result.error) : null;
}

/** A chosen file's bytes in base64, as the upload mutations take them. */
async function base64(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

/** A text field of a form: label, input, the value kept by the form. */
function Field({
  id,
  label,
  value,
  set,
  type = "text",
}: {
  id: string;
  label: string;
  value: string;
  set: (v: string) => void;
  type?: "text" | "url" | "number" | "date" | "password";
}) {
  return (
    <span class="field">
      <label for={id}>{label}</label>
      {/* preact types each input type apart (a union is refused): typed as a text input, any type is given */}
      <input id={id} type={type as "text"} value={value} onInput={(e) => set(e.currentTarget.value)} />
    </span>
  );
}

// ---------------------------------------------------------------------------------------------
// branding

interface Branding {
  businessName: string | null;
  colorAsset: string | null;
  colorBackground: string | null;
  displayInvoices: boolean;
  portalCancelSubscriptions: boolean;
  termsOfServiceUrl: string | null;
  privacyPolicyUrl: string | null;
  name: string;
}
const BRANDING_FIELDS =
  "businessName colorAsset colorBackground displayInvoices portalCancelSubscriptions termsOfServiceUrl " +
  "privacyPolicyUrl name";
const BRANDING = gql`query DashboardBranding { organizationBranding { ${BRANDING_FIELDS} } }`;
const UPDATE_BRANDING = `mutation($input: OrganizationBrandingInput!) {
  updateOrganizationBranding(input: $input) { ${BRANDING_FIELDS} } }`;

const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;
/** `#abc` or `#aabbcc` as lowercase `#aabbcc`; null when it is not a colour (the preview keeps the default). */
function fullHex(value: string): string | null {
  const v = value.trim().toLowerCase();
  if (!HEX.test(v)) return null;
  return v.length === 4 ? `#${v[1]}${v[1]}${v[2]}${v[2]}${v[3]}${v[3]}` : v;
}

/** The portal's look with these colours: its background, text, a link and a button, painted through the CSSOM. */
function Preview({ name, background, asset }: { name: string; background: string; asset: string }) {
  const { t } = usePage();
  const box = useRef<HTMLDivElement>(null);
  const colors = portalColors(fullHex(background), fullHex(asset));
  useLayoutEffect(() => {
    // custom properties set through element.style (the CSSOM), which the CSP's style-src 'self' allows
    const style = box.current!.style;
    style.setProperty("--bg", colors.background);
    style.setProperty("--text", colors.text);
    style.setProperty("--asset", colors.asset);
    style.setProperty("--on-asset", colors.onAsset);
  }, [colors.background, colors.text, colors.asset, colors.onAsset]);
  return (
    <figure class="portal-preview" aria-label={t.portalPreview}>
      <div class="preview-page" ref={box} data-background={colors.background} data-asset={colors.asset}>
        <strong>{name}</strong>
        <p>
          {t.previewText} <a href="#/settings">{t.previewLink}</a>
        </p>
        <button type="button" tabIndex={-1}>
          {t.previewButton}
        </button>
      </div>
      <figcaption>{colors.adjusted ? t.previewAdjusted : t.portalPreview}</figcaption>
    </figure>
  );
}

function BrandingSection() {
  const { t } = usePage();
  const [{ data, error, fetching }, refetch] = useQuery<{ organizationBranding: Branding }>({ query: BRANDING });
  const [form, setForm] = useState<Record<string, string> | null>(null);
  const [flags, setFlags] = useState<{ displayInvoices: boolean; portalCancelSubscriptions: boolean } | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(null);
  if (!data) return <Pending fetching={fetching} error={error} />;
  const b = data.organizationBranding;
  const values = form ?? {
    businessName: b.businessName ?? "",
    colorAsset: b.colorAsset ?? "",
    colorBackground: b.colorBackground ?? "",
    termsOfServiceUrl: b.termsOfServiceUrl ?? "",
    privacyPolicyUrl: b.privacyPolicyUrl ?? "",
  };
  const checks = flags ?? {
    displayInvoices: b.displayInvoices,
    portalCancelSubscriptions: b.portalCancelSubscriptions,
  };
  const set = (name: string) => (v: string) => setForm({ ...values, [name]: v });
  /** a colour: the picker (a full #rrggbb) and the text beside it, one value */
  const color = (name: "colorAsset" | "colorBackground", label: string, fallback: string) => (
    <span class="field color-field">
      <label for={`branding-${name}`}>{label}</label>
      <span>
        <input
          type="color"
          aria-label={t.pickColor(label)}
          value={fullHex(values[name]) ?? fallback}
          onInput={(e) => set(name)(e.currentTarget.value)}
        />{" "}
        <input
          id={`branding-${name}`}
          value={values[name]}
          placeholder={fallback}
          size={8}
          onInput={(e) => set(name)(e.currentTarget.value)}
        />
      </span>
    </span>
  );
  async function submit() {
    // an emptied text clears the field (null: the portal's default)
    const input: Record<string, unknown> = { ...checks };
    for (const [name, value] of Object.entries(values)) input[name] = value.trim() === "" ? null : value.trim();
    const failed = await save(UPDATE_BRANDING, { input });
    setOutcome(failed ? { ok: false, text: failed } : { ok: true, text: t.saved });
    if (!failed) {
      setForm(null);
      setFlags(null);
      refetch({ requestPolicy: "network-only" });
    }
  }
  return (
    <Section id="branding" title={t.branding}>
      <div class="branding">
        <form
          class="filters settings-form"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <Field
            id="branding-businessName"
            label={t.businessName}
            value={values.businessName}
            set={set("businessName")}
          />
          {color("colorAsset", t.colorAsset, "#0b57d0")}
          {color("colorBackground", t.colorBackground, "#ffffff")}
          <Field
            id="branding-terms"
            label={t.termsUrl}
            type="url"
            value={values.termsOfServiceUrl}
            set={set("termsOfServiceUrl")}
          />
          <Field
            id="branding-privacy"
            label={t.privacyUrl}
            type="url"
            value={values.privacyPolicyUrl}
            set={set("privacyPolicyUrl")}
          />
          {(["displayInvoices", "portalCancelSubscriptions"] as const).map((name) => (
            <label key={name} class="check">
              <input
                type="checkbox"
                checked={checks[name]}
                onChange={(e) => setFlags({ ...checks, [name]: e.currentTarget.checked })}
              />{" "}
              {t.brandingFlag[name]}
            </label>
          ))}
          <button type="submit">{t.save}</button>
        </form>
        <Preview name={values.businessName || b.name} background={values.colorBackground} asset={values.colorAsset} />
      </div>
      {outcome && <Message {...outcome} />}
    </Section>
  );
}

// ---------------------------------------------------------------------------------------------
// tax profile

interface TaxProfile {
  taxId: string | null;
  businessName: string | null;
  activity: string | null;
  activityCodes: string[];
  address: string | null;
  commune: string | null;
  city: string | null;
  resolutionNumber: number | null;
  resolutionDate: string | null;
  missing: string[];
}
const PROFILE_FIELDS =
  "taxId businessName activity activityCodes address commune city resolutionNumber resolutionDate missing";
const PROFILE = gql`query DashboardTaxProfile { taxProfile { ${PROFILE_FIELDS} } }`;
const UPDATE_PROFILE = `mutation($input: TaxProfileInput!) { updateTaxProfile(input: $input) { ${PROFILE_FIELDS} } }`;
const TEXT_FIELDS = ["taxId", "businessName", "activity", "address", "commune", "city"] as const;

function TaxProfileSection() {
  const { t } = usePage();
  const [{ data, error, fetching }, refetch] = useQuery<{ taxProfile: TaxProfile }>({ query: PROFILE });
  const [form, setForm] = useState<Record<string, string> | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(null);
  if (!data) return <Pending fetching={fetching} error={error} />;
  const p = data.taxProfile;
  const values = form ?? {
    ...Object.fromEntries(TEXT_FIELDS.map((name) => [name, p[name] ?? ""])),
    activityCodes: p.activityCodes.join(", "),
    resolutionNumber: p.resolutionNumber === null ? "" : String(p.resolutionNumber),
    resolutionDate: p.resolutionDate ?? "",
  };
  const set = (name: string) => (v: string) => setForm({ ...values, [name]: v });
  async function submit() {
    const input: Record<string, unknown> = {};
    for (const name of TEXT_FIELDS) input[name] = values[name].trim() || null;
    input.activityCodes = values.activityCodes
      .split(/[\s,]+/)
      .map((c) => c.trim())
      .filter(Boolean);
    const number = values.resolutionNumber.trim();
    input.resolutionNumber = number === "" ? null : Number(number);
    input.resolutionDate = values.resolutionDate.trim() || null;
    const failed = await save(UPDATE_PROFILE, { input });
    setOutcome(failed ? { ok: false, text: failed } : { ok: true, text: t.saved });
    if (!failed) {
      setForm(null);
      refetch({ requestPolicy: "network-only" });
    }
  }
  return (
    <Section id="tax-profile" title={t.taxProfile}>
      <p class="missing">{p.missing.length === 0 ? t.profileComplete : t.profileMissing(p.missing.join(", "))}</p>
      <form
        class="filters settings-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        {TEXT_FIELDS.map((name) => (
          <Field key={name} id={`profile-${name}`} label={t.profileField[name]} value={values[name]} set={set(name)} />
        ))}
        <Field
          id="profile-activityCodes"
          label={t.profileField.activityCodes}
          value={values.activityCodes}
          set={set("activityCodes")}
        />
        <Field
          id="profile-resolutionNumber"
          label={t.profileField.resolutionNumber}
          type="number"
          value={values.resolutionNumber}
          set={set("resolutionNumber")}
        />
        <Field
          id="profile-resolutionDate"
          label={t.profileField.resolutionDate}
          type="date"
          value={values.resolutionDate}
          set={set("resolutionDate")}
        />
        <button type="submit">{t.save}</button>
      </form>
      {outcome && <Message {...outcome} />}
    </Section>
  );
}

// ---------------------------------------------------------------------------------------------
// certificates and CAFs

interface Certificate {
  id: string;
  subjectRut: string | null;
  validFrom: string | null;
  validTo: string | null;
  created: string;
}
interface Caf {
  id: string;
  documentType: string;
  rangeFrom: number;
  rangeTo: number;
  available: number;
  nextFolio: number | null;
  authorized: string;
  expires: string | null;
}
const SII_FILES = gql`
  query DashboardSiiFiles {
    certificates { id subjectRut validFrom validTo created }
    cafs(first: 100) { edges { node { id documentType rangeFrom rangeTo available nextFolio authorized expires } } }
  }
`;
const UPLOAD_CERTIFICATE = `mutation($input: CertificateInput!) { uploadCertificate(input: $input) { id } }`;
const UPLOAD_CAF = `mutation($input: CafInput!) { uploadCaf(input: $input) { id } }`;

/** An upload form: a file (and, for a certificate, its password), sent in base64. */
function Upload({ kind, done }: { kind: "certificate" | "caf"; done: () => void }) {
  const { t } = usePage();
  const [file, setFile] = useState<File | null>(null);
  const [password, setPassword] = useState("");
  const [outcome, setOutcome] = useState<Outcome>(null);
  async function submit() {
    const input: Record<string, unknown> = { file: file ? await base64(file) : null };
    if (kind === "certificate") input.password = password;
    const failed = await save(kind === "caf" ? UPLOAD_CAF : UPLOAD_CERTIFICATE, { input });
    setOutcome(failed ? { ok: false, text: failed } : { ok: true, text: t.uploaded });
    if (!failed) done();
  }
  return (
    <form
      class="filters settings-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <span class="field">
        <label for={`upload-${kind}`}>{kind === "caf" ? t.cafFile : t.certificateFile}</label>
        <input
          id={`upload-${kind}`}
          type="file"
          accept={kind === "caf" ? ".xml" : ".p12,.pfx"}
          onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        />
      </span>
      {kind === "certificate" && (
        <Field id="upload-password" label={t.password} type="password" value={password} set={setPassword} />
      )}
      <button type="submit">{t.upload}</button>
      {outcome && <Message {...outcome} />}
    </form>
  );
}

function SiiFilesSection() {
  const { t } = usePage();
  const [{ data, error, fetching }, refetch] = useQuery<{ certificates: Certificate[]; cafs: Edges<Caf> }>({
    query: SII_FILES,
  });
  const reload = () => refetch({ requestPolicy: "network-only" });
  return (
    <>
      <Section id="certificates" title={t.certificates}>
        {!data ? (
          <Pending fetching={fetching} error={error} />
        ) : (
          <Table
            name="certificates"
            columns={[{ label: t.subjectRut }, { label: t.validFrom }, { label: t.validTo }, { label: t.uploadedAt }]}
            rows={data.certificates.map((c) => (
              <tr key={c.id} data-id={c.id}>
                <th scope="row">{c.subjectRut ?? "—"}</th>
                <td data-label={t.validFrom}>
                  <DateTimeText value={c.validFrom} />
                </td>
                <td data-label={t.validTo}>
                  <DateTimeText value={c.validTo} />
                </td>
                <td data-label={t.uploadedAt}>
                  <DateTimeText value={c.created} />
                </td>
              </tr>
            ))}
          />
        )}
        <Upload kind="certificate" done={reload} />
      </Section>
      <Section id="cafs" title={t.cafs}>
        {!data ? (
          <Pending fetching={fetching} error={error} />
        ) : (
          <Table
            name="cafs"
            columns={[
              { label: t.documentType },
              { label: t.folioRange },
              { label: t.foliosUsed, num: true },
              { label: t.foliosLeft, num: true },
              { label: t.authorized },
              { label: t.expires },
            ]}
            rows={nodes(data.cafs).map((c) => {
              const size = c.rangeTo - c.rangeFrom + 1;
              const low = cafRunningOut(c);
              return (
                <tr key={c.id} data-id={c.id} class={low ? "running-out" : undefined}>
                  <th scope="row">{c.documentType}</th>
                  <td data-label={t.folioRange}>
                    {c.rangeFrom}–{c.rangeTo}
                  </td>
                  <td data-label={t.foliosUsed} class="num used">
                    {size - c.available}
                  </td>
                  <td data-label={t.foliosLeft} class="num left">
                    {c.available}
                    {low && <strong class="flag"> {t.runningOut}</strong>}
                  </td>
                  <td data-label={t.authorized}>
                    <DateText value={c.authorized} />
                  </td>
                  <td data-label={t.expires}>
                    <DateText value={c.expires} />
                  </td>
                </tr>
              );
            })}
          />
        )}
        <Upload kind="caf" done={reload} />
      </Section>
    </>
  );
}

export function Settings() {
  const { t } = usePage();
  return (
    <AdminOnly>
      <h1>{t.settings}</h1>
      <p>{t.settingsMode}</p>
      <BrandingSection />
      <TaxProfileSection />
      <SiiFilesSection />
      <Section id="settings-members" title={t.members}>
        <p>
          <a href="#/members">{t.manageMembers}</a>
        </p>
      </Section>
    </AdminOnly>
  );
}
