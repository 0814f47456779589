// ESLint runs on one file: the committed GraphQL schema (`npm run lint:schema`, and
// test/schema-lint.test.ts in the unit project, so CI runs it). The rules and why: docs/graphql.md "Schema lint".
import graphql from "@graphql-eslint/eslint-plugin";

export default [
  { ignores: ["**/*", "!schema/", "!schema/schema.graphql"] },
  {
    files: ["schema/schema.graphql"],
    languageOptions: { parser: graphql.parser, parserOptions: { graphQLConfig: { schema: "schema/schema.graphql" } } },
    plugins: { "@graphql-eslint": graphql },
    rules: {
      // every type, field, argument, input field and enum value has a description (GraphiQL's docs pane)
      "@graphql-eslint/require-description": ["error", { types: true, rootField: true, FieldDefinition: true, InputValueDefinition: true, EnumValueDefinition: true, DirectiveDefinition: true }],
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
          "ObjectTypeDefinition,ObjectTypeExtension": { forbiddenPatterns: [/(^type)|(type$)/i], ignorePattern: "^DocumentType$" },
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
      "@graphql-eslint/relay-edge-types": ["error", { withEdgeSuffix: true, shouldImplementNode: false, listTypeCanWrapOnlyEdgeType: false }],
      "@graphql-eslint/relay-page-info": "error",
      "@graphql-eslint/relay-arguments": ["error", { includeBoth: true }],
      "@graphql-eslint/no-scalar-result-type-on-mutation": "error",
    },
  },
];
