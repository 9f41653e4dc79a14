import type { Static } from 'typebox';
import type {
  ActivatePhysicalBody, ConsumerActivatePhysicalBody, ConsumerUpgradePhysicalBody, SimulateCardShipmentBody, UpgradePhysicalBody,
  UpgradeStatusAnswer, UpgradeView,
} from '../contract/card-upgrades.ts';

// Physical card upgrades (issue 30): types from the schemas that validate the routes (sdk/contract/card-upgrades.ts).
// The methods live on the resources of their routes: client.cards (corporate), client.consumerCards, client.sandbox.

export type CardUpgrade = Static<typeof UpgradeView>;
export type CardUpgradeStatus = CardUpgrade['status'];
export type UpgradePhysicalParams = Static<typeof UpgradePhysicalBody>;
export type ActivatePhysicalParams = Static<typeof ActivatePhysicalBody>;
export type ConsumerUpgradePhysicalParams = Static<typeof ConsumerUpgradePhysicalBody>;
export type ConsumerActivatePhysicalParams = Static<typeof ConsumerActivatePhysicalBody>;
export type CardShipmentParams = Static<typeof SimulateCardShipmentBody>;
/** The upgrade after a bureau update; `activationCode` when the update shipped the card. */
export type CardShipmentResult = Static<typeof UpgradeStatusAnswer>;
