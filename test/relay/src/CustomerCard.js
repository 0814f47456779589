// A @refetchable fragment on a Node type: relay-compiler generates CustomerCardRefetchQuery,
// which refetches the customer through node(id:).
import { graphql } from "relay-runtime";

export const customerCardFragment = graphql`
  fragment CustomerCard_customer on Customer @refetchable(queryName: "CustomerCardRefetchQuery") {
    name
    email
    taxId
  }
`;

export const customerCardQuery = graphql`
  query CustomerCardQuery($id: ID!) {
    node(id: $id) {
      # @alias: node(id:) may return another type; the fragment reference is null then
      ...CustomerCard_customer @alias(as: "customer")
    }
  }
`;
