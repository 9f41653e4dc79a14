import { Type } from 'typebox';
import { IsoTime, Literals } from './wire.ts';

/**
 * A message of the real-time push (D39) at /card/v1/ws: `sequence` only grows (it is not
 * contiguous per partner); a client resumes with `?since=<last sequence processed>`.
 * `data` of BALANCE: {externalUserId, balance (the balance object of the user's asset), postingKind, reference, changeTime};
 * of CARD_TRANSACTION: the transaction record (2.9); of QR_PAYMENT: the QR payment record.
 */
export const PushMessage = Type.Object({
  sequence: Type.Integer({ minimum: 1 }),
  type: Literals(['BALANCE', 'CARD_TRANSACTION', 'QR_PAYMENT']),
  externalUserId: Type.String(),
  createTime: IsoTime,
  data: Type.Unknown(),
});
