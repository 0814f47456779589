// A subscription with its lines and its scheduled change (pendingChanges). A pending line points
// at the current line it replaces through `line` (a SubscriptionLine record); its deprecated
// String `id`, the replaced line's id, is not selected (Relay would key the record by it).
import { graphql } from "relay-runtime";

export const subscriptionDetailQuery = graphql`
  query SubscriptionDetailQuery($id: ID!) {
    node(id: $id) {
      ... on Subscription {
        nextBillingCycle
        lines {
          id
          quantity
          plan {
            name
          }
        }
        pendingChanges {
          cycle
          lines {
            quantity
            line {
              id
              quantity
            }
          }
        }
      }
    }
  }
`;
