import type { Static } from 'typebox';
import type { RequestOf } from '../client.ts';
import type {
  ActivatePhysicalBody, ConsumerActivatePhysicalBody, ConsumerUpgradePhysicalBody, SimulateCardShipmentBody, UpgradePhysicalBody,
  UpgradeStatusAnswer, UpgradeView,
} from '../contract/card-upgrades.ts';

// Physical card upgrades (issue 30): types from the schemas that validate the routes (sdk/contract/card-upgrades.ts).
// The methods live on the resources of their routes: client.cards (corporate), client.consumerCards, client.sandbox.

export type CardUpgrade = Static<typeof UpgradeView>;
export type CardUpgradeStatus = CardUpgrade['status'];
export type UpgradePhysicalParams = RequestOf<typeof UpgradePhysicalBody>;
export type ActivatePhysicalParams = RequestOf<typeof ActivatePhysicalBody>;
export type ConsumerUpgradePhysicalParams = RequestOf<typeof ConsumerUpgradePhysicalBody>;
export type ConsumerActivatePhysicalParams = RequestOf<typeof ConsumerActivatePhysicalBody>;
export type CardShipmentParams = RequestOf<typeof SimulateCardShipmentBody>;
/** The upgrade after a bureau update; `activationCode` when the update shipped the card. */
export type CardShipmentResult = Static<typeof UpgradeStatusAnswer>;
