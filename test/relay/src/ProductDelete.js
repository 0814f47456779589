// Deleting with Relay's convention: the payload's deletedId with @deleteRecord removes the
// product's record from the store.
import { graphql } from "relay-runtime";

export const productDeleteQuery = graphql`
  query ProductDeleteQuery($id: ID!) {
    node(id: $id) {
      ... on Product {
        name
      }
    }
  }
`;

export const productDeleteMutation = graphql`
  mutation ProductDeleteMutation($id: ID!) {
    deleteProduct(id: $id) {
      deletedId @deleteRecord
      deleted
      archived
    }
  }
`;
