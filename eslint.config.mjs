// ESLint, two parts (the rules and why: docs/development.md "Formatting and lint"):
// - TypeScript and JavaScript in src, test, bench and scripts: typescript-eslint's `recommended`
//   (no type information, so a run stays a few seconds), unused variables an error unless their name
//   starts with `_`, `any` an error in src (allowed in test/ and bench/, which poke at loose JSON),
//   lines at most 120 characters (Prettier's printWidth; Prettier does not break strings or comments,
//   max-len does). eslint-config-prettier comes last and switches off every style rule Prettier owns.
// - The committed GraphQL schema (`npm run lint`, and test/schema-lint.test.ts in the unit project):
//   @graphql-eslint, the rules and why in docs/graphql.md "Schema lint".
// Generated code, build output, data and test fixtures are not linted.
import graphql from "@graphql-eslint/eslint-plugin";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

const code = [
  "{src,test,bench,scripts,web}/**/*.{ts,tsx,mts,cts,mjs,cjs,js}",
  "clients/typescript/src/index.ts",
  "clients/typescript/examples/**/*.ts",
];

export default [
  {
    ignores: [
      "node_modules/",
      "dist/",
      "data/",
      "**/generated/",
      "**/__generated__/",
      "test/fixtures/",
    ],
  },
  {
    files: ["schema/schema.graphql"],
    languageOptions: { parser: graphql.parser, parserOptions: { graphQLConfig: { schema: "schema/schema.graphql" } } },
    plugins: { "@graphql-eslint": graphql },
    rules: {
      // every type, field, argument, input field and enum value has a description (GraphiQL's docs pane)
      "@graphql-eslint/require-description": [
        "error",
        {
          types: true,
          rootField: true,
          FieldDefinition: true,
          InputValueDefinition: true,
          EnumValueDefinition: true,
          DirectiveDefinition: true,
        },
      ],
      "@graphql-eslint/description-style": ["error", { style: "block" }],
      "@graphql-eslint/no-hashtag-description": "error",
      "@graphql-eslint/require-deprecation-reason": "error",
      "@graphql-eslint/naming-convention": [
        "error",
        {
          types: "PascalCase",
          FieldDefinition: "camelCase",
          InputValueDefinition: "camelCase",
          Argument: "camelCase",
          DirectiveDefinition: "camelCase",
          // the spec's strings, as REST sends them: draft, one_time, requested_by_customer
          // SII's reply codes (SwapReplyStatus: ACD, ERM, RCD, RFP, RFT) are the spec's strings too, upper case as SII writes them
          EnumValueDefinition: { style: "snake_case", ignorePattern: "^(ACD|ERM|RCD|RFP|RFT)$" },
          "FieldDefinition[parent.name.value=Query]": { forbiddenPatterns: [/^(query|get)/i, /query$/i] },
          "FieldDefinition[parent.name.value=Mutation]": { forbiddenPatterns: [/(^mutation)|(mutation$)/i] },
          "EnumTypeDefinition,EnumTypeExtension": { forbiddenPatterns: [/(^enum)|(enum$)/i] },
          "InterfaceTypeDefinition,InterfaceTypeExtension": { forbiddenPatterns: [/(^interface)|(interface$)/i] },
          "UnionTypeDefinition,UnionTypeExtension": { forbiddenPatterns: [/(^union)|(union$)/i] },
          // DocumentType is the billing term (SII's document types: CL33, CL61...), not a "Type" suffix
          "ObjectTypeDefinition,ObjectTypeExtension": {
            forbiddenPatterns: [/(^type)|(type$)/i],
            ignorePattern: "^DocumentType$",
          },
        },
      ],
      "@graphql-eslint/no-unreachable-types": "error",
      "@graphql-eslint/unique-enum-value-names": "error",
      "@graphql-eslint/unique-field-definition-names": "error",
      "@graphql-eslint/unique-type-names": "error",
      "@graphql-eslint/unique-operation-types": "error",
      "@graphql-eslint/unique-directive-names": "error",
      "@graphql-eslint/unique-directive-names-per-location": "error",
      "@graphql-eslint/lone-schema-definition": "error",
      "@graphql-eslint/known-type-names": "error",
      "@graphql-eslint/known-directives": "error",
      "@graphql-eslint/known-argument-names": "error",
      "@graphql-eslint/provided-required-arguments": "error",
      "@graphql-eslint/possible-type-extension": "error",
      // Relay's connection spec (relay-compiler checks the same when it compiles a @connection)
      "@graphql-eslint/relay-connection-types": "error",
      // shouldImplementNode off: the reference data connections (countries, currencies, states,
      // document types) page value records keyed by their code; listTypeCanWrapOnlyEdgeType off:
      // plain lists of embedded values (lines, rates, contacts) are not connections
      "@graphql-eslint/relay-edge-types": [
        "error",
        { withEdgeSuffix: true, shouldImplementNode: false, listTypeCanWrapOnlyEdgeType: false },
      ],
      "@graphql-eslint/relay-page-info": "error",
      "@graphql-eslint/relay-arguments": ["error", { includeBoth: true }],
      "@graphql-eslint/no-scalar-result-type-on-mutation": "error",
    },
  },
  ...tseslint.configs.recommended.map((c) => ({ ...c, files: code })),
  {
    files: code,
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  { files: ["test/**", "bench/**"], rules: { "@typescript-eslint/no-explicit-any": "off" } },
  { ...prettier, files: code },
  // after eslint-config-prettier, which switches max-len off: Prettier wraps code at 120 but leaves
  // long strings, comments and regexes alone
  { files: code, rules: { "max-len": ["error", { code: 120, ignoreUrls: true }] } },
];
