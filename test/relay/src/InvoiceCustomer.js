// A finalized invoice's two customers: `customer`, the Customer record itself (live, normalized
// under its id with the customer's own queries), and `issuedCustomer`, the customer as the
// invoice was issued to it (no id: a record inside the invoice, never merged with the Customer).
import { graphql } from "relay-runtime";

export const invoiceCustomerQuery = graphql`
  query InvoiceCustomerQuery($id: ID!) {
    node(id: $id) {
      ... on Invoice {
        number
        customer {
          id
          name
        }
        issuedCustomer {
          name
          taxId
        }
      }
    }
  }
`;
