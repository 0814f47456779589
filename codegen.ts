/**
 * graphql-codegen: typed documents (TypedDocumentNode) for the operations the REST adapter runs
 * (src/rest/operations/*.graphql, and the standard ones scripts/rest-operations.ts derives by rule),
 * checked against the committed schema/schema.graphql. Run with `npm run generate`.
 */
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: "schema/schema.graphql",
  documents: ["src/rest/operations/*.graphql", "src/graphql/generated/rest-operations.graphql"],
  generates: {
    "src/graphql/generated/operations.ts": {
      plugins: ["typescript-operations", "typed-document-node"],
      config: {
        scalars: { Decimal: "string", Date: "string", DateTime: "string", JSONObject: "Record<string, unknown>" },
        useTypeImports: true,
        enumsAsTypes: true,
        avoidOptionals: { field: true, inputValue: false, object: true },
      },
    },
  },
  silent: true,
};

export default config;
