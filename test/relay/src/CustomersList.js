// A paginated list of customers: a @refetchable fragment on Query with a @connection, as
// usePaginationFragment needs it. relay-compiler generates CustomersListPaginationQuery from it.
import { graphql } from "relay-runtime";

export const customersListFragment = graphql`
  fragment CustomersList_query on Query
  @argumentDefinitions(count: { type: "Int", defaultValue: 2 }, cursor: { type: "String" })
  @refetchable(queryName: "CustomersListPaginationQuery") {
    customers(first: $count, after: $cursor) @connection(key: "CustomersList_customers") {
      totalCount
      edges {
        node {
          id
          name
          email
        }
      }
    }
  }
`;

export const customersListQuery = graphql`
  query CustomersListQuery {
    ...CustomersList_query
  }
`;
