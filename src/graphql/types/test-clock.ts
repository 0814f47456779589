/**
 * Test clocks (docs/test-clocks.md): node type, `testClocks` connection, create /
 * advance / delete mutations. Test mode only. Rules: services/test-clocks.ts (advancing runs
 * services/billing-run.ts).
 */
import { builder } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import { offsetArg, prismaConnection } from "../pagination.js";
import { advanceTestClock, createTestClock, deleteTestClock, testClockTenant } from "../../services/test-clocks.js";

/** Stored test clock statuses (services/test-clocks.ts sets them after each advance). */
type TestClockStatusValue = "ready" | "internal_failure";

export const TestClockStatus = builder.enumType("TestClockStatus", {
  description: "The outcome of a test clock's last advance (docs/test-clocks.md).",
  values: {
    ready: {
      value: "ready",
      description: "the last advance (if any) billed every due cycle; advances complete within the request",
    },
    internal_failure: {
      value: "internal_failure",
      description:
        "a subscription could not be billed on the last advance (its error is in the billing run's log); advance " +
        "again to retry",
    },
  } as const satisfies DescribedValues<TestClockStatusValue>,
});

export const TestClock = builder.prismaNode("TestClock", {
  id: { field: "id", description: "`clk_` id" },
  // live keys see no clock (null), like any other tenant's row
  findUnique: (id, ctx) => ({ id, organizationId: ctx.auth.testMode ? ctx.auth.organizationId : "" }),
  nullable: true,
  description:
    "A frozen time for test-mode customers attached to it; advancing it bills their subscriptions as if that time " +
    "had come.",
  fields: (t) => ({
    name: t.exposeString("name", { nullable: true, description: "a label, at most 200 characters; null when not set" }),
    frozenTime: t.expose("frozenTime", {
      type: "DateTime",
      description: "the clock's current time, ISO 8601: 'now' for its customers' subscriptions",
    }),
    status: t.field({
      type: TestClockStatus,
      description: "outcome of the last advance",
      select: { status: true },
      resolve: (clock) => clock.status as TestClockStatusValue,
    }),
    customers: t.relationCount("customers", { description: "number of customers attached" }),
    created: t.expose("createdAt", { type: "DateTime", description: "creation time (real time), ISO 8601" }),
    updated: t.expose("updatedAt", { type: "DateTime", description: "last change (real time), ISO 8601" }),
  }),
});

const TestClockInput = builder.inputType("TestClockInput", {
  description: "A test clock's name and time (createTestClock) or its new time (advanceTestClock).",
  fields: (t) => ({
    name: t.string({ description: "at most 200 characters" }),
    frozenTime: t.field({
      type: "DateTime",
      required: true,
      description: "create: the start time; advance: a later time",
    }),
  }),
});

const TestClockDeletePayload = builder.objectRef<{ id: string; deleted: boolean }>("TestClockDeletePayload").implement({
  description: "Result of deleting a test clock.",
  fields: (t) => ({
    deletedId: t.exposeID("id", { description: "id of the deleted test clock (Relay's deletedId convention)" }),
    id: t.exposeString("id", {
      description: "id of the deleted test clock",
      deprecationReason:
        "Use deletedId: an id field holding another type's id breaks Relay's store. Removed in the next release.",
    }),
    deleted: t.exposeBoolean("deleted", {
      description:
        "always true: the clock is gone (a clock with customers is never deleted: the mutation fails with " +
        "invalid_state)",
    }),
  }),
});

builder.queryFields((t) => ({
  testClocks: t.connection(
    {
      type: TestClock,
      description: "Test clocks of the caller's organization, newest first. Errors: permission_denied with a live key.",
      args: { offset: offsetArg(t) },
      resolve: (_root, args, ctx, info) =>
        prismaConnection(ctx, info, ctx.prisma.testClock, args, {
          where: testClockTenant(ctx),
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        }),
    },
    { description: "A page of test clocks, newest first." },
    { description: "A test clock in a page of test clocks." },
  ),
}));

builder.mutationFields((t) => ({
  createTestClock: t.prismaField({
    type: "TestClock",
    description:
      "Creates a test clock frozen at `frozenTime`. Errors: permission_denied (live key), validation_error " +
      "(frozen_time missing or not ISO 8601, name longer than 200 characters).",
    args: { input: t.arg({ type: TestClockInput, required: true, description: "name and start time" }) },
    resolve: async (query, _root, args, ctx) => {
      const created = await createTestClock(ctx, args.input);
      return ctx.prisma.testClock.findUniqueOrThrow({ ...query, where: { id: created.id } });
    },
  }),
  advanceTestClock: t.prismaField({
    type: "TestClock",
    description:
      "Moves the clock forward to `frozenTime` and runs the billing run for its customers' subscriptions up to that " +
      "time (every due cycle, in order). " +
      "Errors: permission_denied (live key), not_found, validation_error (frozen_time not later than the " +
      "clock's time).",
    args: {
      id: t.arg.id({ required: true, description: "`clk_` id" }),
      input: t.arg({ type: TestClockInput, required: true, description: "the new time (name is ignored)" }),
    },
    resolve: async (query, _root, args, ctx) => {
      await advanceTestClock(ctx, String(args.id), args.input, { sendsMail: ctx.mailer !== null });
      return ctx.prisma.testClock.findUniqueOrThrow({ ...query, where: { id: String(args.id) } });
    },
  }),
  deleteTestClock: t.field({
    type: TestClockDeletePayload,
    description:
      "Deletes a clock without customers. Errors: permission_denied (live key), not_found, invalid_state (customers " +
      "attached: delete them first).",
    args: { id: t.arg.id({ required: true, description: "`clk_` id" }) },
    resolve: (_root, args, ctx) => deleteTestClock(ctx, String(args.id)),
  }),
}));
