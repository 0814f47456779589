/**
 * The organization's API keys for admins (docs/dashboard.md "API keys"): `apiKeys`, `createApiKey` (the key shown
 * once) and `revokeApiKey`, the dashboard's Developers page. The command line's `api-key create|list|revoke` do
 * the same across organizations (services/api-keys.ts).
 */
import { ADMIN_FIELD, builder, type DescribedValues } from "../builder.js";
import {
  createOrganizationApiKey,
  organizationApiKeys,
  revokeOrganizationApiKey,
  type ApiKeyListing,
  type KeyMode,
} from "../../services/api-keys.js";

const ApiKeyMode = builder.enumType("ApiKeyMode", {
  description: "The data an API key works on.",
  values: {
    test: { value: "test", description: "test data (`sk_test_...`): test clocks, the test gateway" },
    live: { value: "live", description: "live data (`sk_live_...`): real documents sent to SII, real charges" },
  } as const satisfies DescribedValues<KeyMode>,
});

const ApiKeyRef = builder.objectRef<ApiKeyListing>("ApiKey").implement({
  description: "An API key of the organization: never the key itself (only its hash is stored) nor its hash.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "the key's id (`key_...`)" }),
    prefix: t.exposeString("prefix", { description: "the key's first 12 characters, e.g. `sk_test_ab12`" }),
    mode: t.expose("mode", { type: ApiKeyMode, description: "test or live data" }),
    email: t.exposeString("email", { description: "the e-mail the key acts for, written as `user` on documents" }),
    createdAt: t.field({
      type: "DateTime",
      description: "when it was created",
      resolve: (k) => new Date(k.created_at),
    }),
    lastUsedAt: t.field({
      type: "DateTime",
      nullable: true,
      description: "its last request (written at most once a minute); null: never used",
      resolve: (k) => (k.last_used_at ? new Date(k.last_used_at) : null),
    }),
    expiresAt: t.field({
      type: "DateTime",
      nullable: true,
      description: "from when it answers 401; null: it never expires",
      resolve: (k) => (k.expires_at ? new Date(k.expires_at) : null),
    }),
    revokedAt: t.field({
      type: "DateTime",
      nullable: true,
      description: "when it was revoked (it answers 401 since); null: not revoked",
      resolve: (k) => (k.revoked_at ? new Date(k.revoked_at) : null),
    }),
  }),
});

const CreatedApiKeyRef = builder.objectRef<{ key: string; apiKey: ApiKeyListing }>("CreatedApiKey").implement({
  description: "A key made by createApiKey: the key itself is in this answer only and cannot be read again.",
  fields: (t) => ({
    key: t.exposeString("key", { description: "the full key, `sk_test_...` or `sk_live_...`: store it now" }),
    apiKey: t.field({ type: ApiKeyRef, description: "the key as apiKeys lists it", resolve: (c) => c.apiKey }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.field({
    ...ADMIN_FIELD,
    type: [ApiKeyRef],
    description:
      "The organization's API keys of both modes, revoked ones included, oldest first (API keys and admin members; " +
      "others get permission_denied).",
    resolve: (_root, _args, ctx) => organizationApiKeys(ctx),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    ...ADMIN_FIELD,
    type: CreatedApiKeyRef,
    description:
      "Creates an API key of the organization acting for the caller's e-mail, and answers it once. An admin member " +
      "creates keys of either mode; an API key only of its own mode. Errors: permission_denied (a finance or viewer " +
      "member; a key asking for the other mode), validation_error on expiresAt (not in the future).",
    args: {
      mode: t.arg({ type: ApiKeyMode, required: true, description: "test or live" }),
      expiresAt: t.arg({ type: "DateTime", description: "when the key stops working; absent or null: never" }),
    },
    resolve: (_root, args, ctx) => createOrganizationApiKey(ctx, { mode: args.mode, expiresAt: args.expiresAt }),
  }),
  revokeApiKey: t.field({
    ...ADMIN_FIELD,
    type: ApiKeyRef,
    description:
      "Revokes an API key of the organization: it answers 401 from the next request on, in every process. " +
      "Revoking a revoked key changes nothing. Errors: not_found (no such key in the organization), " +
      "permission_denied (a finance or viewer member; a key revoking one of the other mode).",
    args: { id: t.arg.id({ required: true, description: "the key's id (`key_...`)" }) },
    resolve: (_root, args, ctx) => revokeOrganizationApiKey(ctx, String(args.id)),
  }),
}));
