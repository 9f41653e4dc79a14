import type { LosslessNumber } from 'lossless-json';
import type { SignedHttpClient } from '../client.ts';
import type { Page } from './organizations.ts';

/** Amounts are exact JSON numbers: LosslessNumber unless a safe integer (use decimalText()). */
export type TransactionAmount = LosslessNumber | number;

export type TransactionStatus = 'PENDING' | 'CLEARED' | 'REVERSED' | 'EXPIRED' | 'DECLINED' | 'POSTED';
export type MessageType = 'AUTHORIZATION' | 'CLEARING' | 'REVERSAL' | 'REFUND';
export type Channel = 'ECOM' | 'POS' | 'ATM';

/** A card transaction record (2.9): the answer of every engine call and the CARD_TRANSACTION event data. */
export interface CardTransaction {
  transId: string;
  cardId: string;
  organizationId: string;
  subjectType: string;
  subjectId: string;
  messageType: MessageType;
  authType: 'EXPEND' | 'REFUND' | 'REVERSAL';
  debitCreditIndicator: 'D' | 'C';
  approved: boolean;
  status: TransactionStatus;
  declineReason: string | null;
  declineDetail: string | null;
  amount: TransactionAmount;
  currency: string;
  billingAmount: TransactionAmount;
  billingCurrency: string;
  holdAmount: TransactionAmount;
  merchantName: string | null;
  mcc: string | null;
  merchantCountry: string | null;
  channel: Channel | null;
  outstandingTransactionId: string | null;
  postedTransactionId: string | null;
  originalTransId: string | null;
  networkTransactionId: string;
  source: 'NETWORK' | 'SANDBOX';
  /** The auth_url forwarding of this authorization (D37), null when not forwarded. */
  partnerDecision: {
    outcome: 'APPROVED' | 'DECLINED' | 'STAND_IN_APPROVED' | 'STAND_IN_DECLINED';
    standInReason: string | null;
    partnerDeclineReason: string | null;
    latencyMs: number;
    httpStatus: number | null;
  } | null;
  transactionTime: string;
  createTime: string;
  modifyTime: string;
}

export interface ListTransactionsParams {
  organizationId?: string;
  cardId?: string;
  customerId?: string;
  status?: TransactionStatus;
  messageType?: MessageType;
  startTime?: string;
  endTime?: string;
  page?: number;
  pageSize?: number;
}

export interface ResolvedTransactionId {
  id: string;
  found: boolean;
  idType: 'OUTSTANDING' | 'POSTED' | null;
  posted: boolean;
  postingStatus: TransactionStatus | null;
  transId: string | null;
  relatedTransactionId: string | null;
}

export class TransactionsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Card transactions of the partner, newest first.
   * @example await client.transactions.list({ cardId, status: 'PENDING' });
   */
  list(params: ListTransactionsParams = {}): Promise<Page<CardTransaction>> {
    return this.http.call('GET', '/open-api-corp/transaction/v1/list', { query: { ...params } });
  }

  /** @example await client.transactions.query(transId); */
  query(transId: string): Promise<CardTransaction> {
    return this.http.call('GET', '/open-api-corp/transaction/v1/query', { query: { transId } });
  }

  /**
   * Whether outstanding or posted ids have been posted, and the linked id.
   * @example await client.transactions.resolveIds([outstandingTransactionId]);
   */
  resolveIds(ids: string[]): Promise<ResolvedTransactionId[]> {
    return this.http.call('POST', '/card/v1/transaction/id/resolve', { body: { ids } });
  }
}
