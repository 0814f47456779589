// A subscription with its lines and its scheduled change (pendingChanges). The pending lines'
// own id is not selected: until it has one of its own it repeats the current line's `lin_` id,
// which Relay's store would merge into the SubscriptionLine record.
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
          }
        }
      }
    }
  }
`;
