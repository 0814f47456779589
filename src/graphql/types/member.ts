/**
 * The dashboard's team members (docs/dashboard.md "Members and sign-in"): `me` (the member signed in), the admins'
 * `members`, `inviteMember`, `updateMemberRole`, `removeMember`, and `signOutMember`. Signing in happens outside
 * GraphQL (pages/dashboard.ts: POST /dashboard/api/sign-in), which sets the session cookie /graphql then reads.
 */
import { ADMIN_FIELD, builder, type DescribedValues } from "../builder.js";
import { clearedSessionCookies, type MemberRole } from "../../domain/members.js";
import {
  currentMember,
  inviteMember,
  listMembers,
  removeMember,
  signOutMember,
  updateMemberRole,
  type MemberInvitation,
  type MemberView,
} from "../../services/members.js";

export const MemberRoleEnum = builder.enumType("MemberRole", {
  description: 'What a dashboard member may do (docs/dashboard.md "Roles").',
  values: {
    admin: { value: "admin", description: "everything, including members, API keys and settings" },
    finance: {
      value: "finance",
      description:
        "every query, and the mutations of customers, documents, payments, subscriptions and dunning; not those of " +
        "members, API keys or settings (webhook endpoints, certificates, CAFs, tax profile, branding)",
    },
    viewer: { value: "viewer", description: "queries only: every mutation answers permission_denied" },
  } as const satisfies DescribedValues<MemberRole>,
});

const MemberRef = builder.objectRef<MemberView>("Member").implement({
  description:
    "A person of the organization who signs in to the dashboard. Not per mode: a member works on test and live data " +
    "alike (the X-Dashboard-Mode header).",
  fields: (t) => ({
    id: t.exposeID("id", { description: "the member's id (`mem_...`)" }),
    email: t.exposeString("email", {
      description: "lowercase e-mail: the sign-in name, written as `user` on the documents the member creates",
    }),
    name: t.exposeString("name", { description: "the member's name" }),
    role: t.expose("role", { type: MemberRoleEnum, description: "what the member may do" }),
    createdAt: t.expose("createdAt", { type: "DateTime", description: "when the member was first invited" }),
    lastSignInAt: t.expose("lastSignInAt", {
      type: "DateTime",
      nullable: true,
      description: "the member's last sign-in (or invitation accepted); null: never signed in",
    }),
    invitationPending: t.exposeBoolean("invitationPending", {
      description: "true until the member opens the invitation link and chooses a password",
    }),
  }),
});

const MemberInvitationRef = builder.objectRef<MemberInvitation>("MemberInvitation").implement({
  description: "An invitation made by inviteMember: the member and its one-time link, shown in this answer only.",
  fields: (t) => ({
    member: t.field({ type: MemberRef, description: "the member invited", resolve: (i) => i.member }),
    inviteUrl: t.exposeString("link", {
      description:
        "`<PUBLIC_URL>/dashboard/invite/<token>`: where the person chooses a password; works once, until expiresAt. " +
        "Only its hash is stored: it cannot be read again (invite again for a new one)",
    }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", description: "when the link stops working (7 days)" }),
    emailQueued: t.exposeBoolean("emailQueued", {
      description: "true when the link was also e-mailed to the member through the outbox (SMTP configured)",
    }),
  }),
});

builder.queryFields((t) => ({
  me: t.field({
    type: MemberRef,
    nullable: true,
    description: "The dashboard member whose session the request carries; null for an API key.",
    resolve: (_root, _args, ctx) => currentMember(ctx),
  }),
  members: t.field({
    ...ADMIN_FIELD,
    type: [MemberRef],
    description: "The organization's members, oldest first (API keys and admin members; others get permission_denied).",
    resolve: (_root, _args, ctx) => listMembers(ctx),
  }),
}));

builder.mutationFields((t) => ({
  inviteMember: t.field({
    ...ADMIN_FIELD,
    type: MemberInvitationRef,
    description:
      "Invites a person to the dashboard (API keys and admin members): a new member without password, or the " +
      "pending member of that e-mail invited again (its earlier links stop working), and a one-time link valid 7 " +
      "days, also e-mailed when SMTP is configured. Errors: validation_error (email, role, name), invalid_state (the " +
      "e-mail is already a member who chose a password).",
    args: {
      email: t.arg.string({ required: true, description: "the person's e-mail (stored lowercase)" }),
      name: t.arg.string({ description: "the person's name; default: the e-mail's part before @" }),
      role: t.arg({ type: MemberRoleEnum, required: true, description: "what the member may do" }),
    },
    resolve: (_root, args, ctx) =>
      inviteMember(
        {
          prisma: ctx.prisma,
          settings: ctx.settings,
          baseUrl: ctx.baseUrl,
          now: ctx.now(),
          mailer: ctx.mailer,
          logger: ctx.logger,
        },
        ctx.auth.organizationId,
        args,
      ),
  }),
  updateMemberRole: t.field({
    ...ADMIN_FIELD,
    type: MemberRef,
    description:
      "Changes a member's role (API keys and admin members); the member's sessions act with it from their next " +
      "request. Errors: not_found, invalid_state (the organization's last admin).",
    args: {
      id: t.arg.id({ required: true, description: "the member's id (`mem_...`)" }),
      role: t.arg({ type: MemberRoleEnum, required: true, description: "the new role" }),
    },
    resolve: (_root, args, ctx) => updateMemberRole(ctx, String(args.id), args.role),
  }),
  removeMember: t.field({
    ...ADMIN_FIELD,
    type: MemberRef,
    description:
      "Removes a member (API keys and admin members): its sessions answer 401 from the next request on and its " +
      "links stop working; documents keep its e-mail as `user`. Answers the member as it was. Errors: not_found, " +
      "invalid_state (the organization's last admin).",
    args: { id: t.arg.id({ required: true, description: "the member's id (`mem_...`)" }) },
    resolve: (_root, args, ctx) => removeMember(ctx, String(args.id)),
  }),
  signOutMember: t.field({
    authScopes: { member: true },
    skipTypeScopes: true,
    type: MemberRef,
    description:
      "Ends the session the request carries, for a member of any role (an API key gets permission_denied): the " +
      "cookie answers 401 from the next request on, and both dashboard cookies are cleared. Answers the member " +
      "signed out.",
    resolve: async (_root, _args, ctx) => {
      const member = await currentMember(ctx);
      await signOutMember(ctx);
      ctx.responseCookies?.push(...clearedSessionCookies(ctx.baseUrl.startsWith("https:")));
      return member!;
    },
  }),
}));
