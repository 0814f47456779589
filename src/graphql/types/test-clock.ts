/**
 * Test clocks (issue 5; docs/test-clocks.md): node type, `testClocks` connection, create /
 * advance / delete mutations. Test mode only. Rules: services/test-clocks.ts (advancing runs
 * services/billing-run.ts).
 */
import { builder } from "../builder.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { advanceTestClock, createTestClock, deleteTestClock, testClockTenant } from "../../services/test-clocks.js";

export const TestClock = builder.prismaNode("TestClock", {
  id: { field: "id", description: "`clk_` id" },
  // live keys see no clock (null), like any other tenant's row
  findUnique: (id, ctx) => ({ id, organizationId: ctx.auth.testMode ? ctx.auth.organizationId : "" }),
  nullable: true,
  description: "A frozen time for test-mode customers attached to it; advancing it bills their subscriptions as if that time had come.",
  fields: (t) => ({
    name: t.exposeString("name", { nullable: true }),
    frozenTime: t.expose("frozenTime", { type: "DateTime", description: "the clock's current time" }),
    status: t.exposeString("status", { description: "ready (advances complete within the request) | internal_failure (a subscription could not be billed on the last advance)" }),
    customers: t.relationCount("customers", { description: "number of customers attached" }),
    created: t.expose("createdAt", { type: "DateTime" }),
    updated: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const TestClockInput = builder.inputType("TestClockInput", {
  fields: (t) => ({
    name: t.string({ description: "at most 200 characters" }),
    frozenTime: t.field({ type: "DateTime", required: true, description: "create: the start time; advance: a later time" }),
  }),
});

const TestClockDeletePayload = builder.objectRef<{ id: string; deleted: boolean }>("TestClockDeletePayload").implement({
  description: "Result of deleting a test clock.",
  fields: (t) => ({
    deletedId: t.exposeID("id", { description: "id of the deleted test clock (Relay's deletedId convention)" }),
    id: t.exposeString("id", { description: "id of the deleted test clock", deprecationReason: "Use deletedId: an id field holding another type's id breaks Relay's store. Removed in the next release." }),
    deleted: t.exposeBoolean("deleted"),
  }),
});

builder.queryFields((t) => ({
  testClocks: t.connection({
    type: TestClock,
    description: "Test clocks of the caller's organization, newest first. Errors: permission_denied with a live key.",
    args: { offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) =>
      prismaConnection(ctx, info, ctx.prisma.testClock, args, { where: testClockTenant(ctx), orderBy: [{ createdAt: "desc" }, { id: "desc" }] }),
  }),
}));

builder.mutationFields((t) => ({
  createTestClock: t.prismaField({
    type: "TestClock",
    description: "Creates a test clock frozen at `frozenTime`. Errors: permission_denied (live key), validation_error.",
    args: { input: t.arg({ type: TestClockInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createTestClock(ctx, args.input);
      return ctx.prisma.testClock.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  advanceTestClock: t.prismaField({
    type: "TestClock",
    description:
      "Moves the clock forward to `frozenTime` and runs the billing run for its customers' subscriptions up to that time (every due cycle, in order). Errors: permission_denied, not_found, validation_error (not later than now).",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: TestClockInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      await advanceTestClock(ctx, String(args.id), args.input);
      return ctx.prisma.testClock.findUniqueOrThrow({ ...query, where: { id: String(args.id) } });
    },
  }),
  deleteTestClock: t.field({
    type: TestClockDeletePayload,
    description: "Deletes a clock without customers. Errors: permission_denied, not_found, invalid_state (customers attached).",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deleteTestClock(ctx, String(args.id)),
  }),
}));
