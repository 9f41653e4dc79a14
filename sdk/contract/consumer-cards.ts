import { Type } from 'typebox';
import { TransactionOut } from './authorization.ts';
import { OpenUpgrade } from './card-upgrades.ts';
import { CARDHOLDER_NAME_MAX, CardForm, CardNetwork, CardStatus } from './cards.ts';
import { AssetCode, ExternalUserId } from './managed-balance.ts';
import { IsoTime, Literals, Nullable, Page, PagingQuery, WireNumber } from './wire.ts';

/**
 * Consumer cards of the managed-balance model (4.2; D35, D36, D43): cards of a partner's end users
 * spending the user's funding asset. See docs/consumer-cards.md.
 */

const CardId = Type.String({ minLength: 1, maxLength: 20, description: 'The card id (D43: at most 20 characters)' });
/** E.164: "+" and 7 to 15 digits. */
export const Mobile = Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164 mobile number (+ and 7-15 digits): where SMS codes go' });
export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254, description: 'Where EMAIL codes go' });

export const ConsumerApplyBody = Type.Object({
  externalUserId: ExternalUserId,
  cardProfileId: Type.String({ minLength: 1, maxLength: 32, description: 'A consumer (balanceMode ASSET) profile' }),
  cardholderName: Type.String({
    minLength: 1, maxLength: CARDHOLDER_NAME_MAX, pattern: "^[A-Za-z][A-Za-z .'-]*$", description: 'Embossed name, Latin letters',
  }),
  fundingAsset: Type.Optional(AssetCode),
  mobile: Type.Optional(Mobile),
  email: Type.Optional(Email),
});

export const ConsumerFee = Type.Object({
  type: Literals(['CARD_PRINTING_FEE', 'CARD_POSTAL_FEE', 'CARD_VIP_FROZEN_FEE']),
  asset: Type.String(),
  amount: WireNumber(),
  transactionId: Type.String({ description: 'The asset movement of the fee (/user-asset/v1/transaction-detail)' }),
});

export const ConsumerCardView = Type.Object({
  cardId: Type.String(),
  externalUserId: Type.String(),
  cardProfileId: Type.String(),
  cardNetwork: CardNetwork,
  cardForm: CardForm,
  currency: Type.String({ description: 'Billing currency of the card (USD)' }),
  fundingAsset: Type.String({ description: 'The asset the card spends: 1:1 with USD when USD-pegged, else at its operator rate (D35)' }),
  cardholderName: Nullable(Type.String()),
  cardMantissa: Type.String({ description: 'Last four digits of the card number' }),
  panFirst6: Type.String(),
  status: CardStatus,
  createTime: IsoTime,
  modifyTime: IsoTime,
  openUpgrade: Type.Optional(OpenUpgrade),
});
export const ConsumerApplyView = Type.Intersect([ConsumerCardView, Type.Object({ fees: Type.Array(ConsumerFee) })]);
export const ConsumerCardPage = Page(ConsumerCardView);

export const ConsumerListQuery = Type.Object({ externalUserId: ExternalUserId, status: Type.Optional(CardStatus), ...PagingQuery });
export const ConsumerDetailQuery = Type.Object({ externalUserId: ExternalUserId, cardId: CardId });

const VerificationCode = Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code of /card/v2/send-verification-code' });
export const ConsumerBlockBody = Type.Object({
  externalUserId: ExternalUserId,
  block: Type.Boolean({ description: 'true freezes (no code needed); false unfreezes (smsCode or emailCode needed)' }),
  cardId: CardId,
  smsCode: Type.Optional(VerificationCode),
  emailCode: Type.Optional(VerificationCode),
});

export const SendCodeBody = Type.Object({
  externalUserId: ExternalUserId,
  cardId: CardId,
  channel: Literals(['SMS', 'EMAIL']),
});
export const SendCodeView = Type.Object({
  channel: Literals(['SMS', 'EMAIL']),
  destination: Type.String({ description: 'The masked mobile number or email address the code went to' }),
  expireTime: IsoTime,
});

export const ContactBody = Type.Object({
  externalUserId: ExternalUserId,
  mobile: Type.Optional(Mobile),
  email: Type.Optional(Email),
});
export const ContactView = Type.Object({
  externalUserId: Type.String(),
  mobile: Nullable(Type.String()),
  email: Nullable(Type.String()),
});

export const ConsumerTransaction = Type.Intersect([TransactionOut, Type.Object({ externalUserId: Type.String() })]);
export const ConsumerTransactionPage = Page(ConsumerTransaction);
export const FiatTransactionsQuery = Type.Object({
  externalUserId: Type.Optional(ExternalUserId),
  cardId: Type.Optional(CardId),
  authType: Type.Optional(Literals(['EXPEND', 'REFUND', 'REVERSAL'])),
  status: Type.Optional(Literals(['PENDING', 'CLEARED', 'REVERSED', 'EXPIRED', 'DECLINED', 'POSTED'])),
  startTime: Type.Optional(IsoTime),
  endTime: Type.Optional(IsoTime),
  ...PagingQuery,
});
export const StatementDetailQuery = Type.Object({
  externalUserId: ExternalUserId,
  transId: Type.String({ minLength: 1, maxLength: 20, description: 'The transaction (2.9 transId)' }),
});
