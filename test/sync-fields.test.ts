import { describe, expect, it } from "vitest";
import { isInterfaceType, type GraphQLResolveInfo } from "graphql";
import { schema } from "../src/graphql/schema.js";

describe("Node ids without a promise (graphql/sync-fields.ts)", () => {
  it("every Node type's id answers its id column at once, as a string", () => {
    const node = schema.getType("Node");
    if (!isInterfaceType(node)) throw new Error("no Node interface");
    const types = schema.getPossibleTypes(node);
    expect(types.length).toBeGreaterThan(10);
    for (const type of types) {
      const resolve = type.getFields().id.resolve!;
      const id = resolve({ id: "inv_0a1B2c3D4e5F6g7H8i9J0k1L" }, {}, {}, {} as GraphQLResolveInfo);
      expect(id, type.name).toBe("inv_0a1B2c3D4e5F6g7H8i9J0k1L");
    }
  });
});
