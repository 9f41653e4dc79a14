import type { Static } from 'typebox';
import { paginate, type CallOptions, type SignedHttpClient } from '../client.ts';
import type {
  Channel as ChannelSchema, ListTransactionsQuery, ResolvedOut, TransactionOut, TransactionStatus as TransactionStatusSchema,
} from '../contract/authorization.ts';
import type { WireAmount } from '../contract/wire.ts';
import type { Page } from './organizations.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/authorization.ts).
export type TransactionAmount = WireAmount;
/** A card transaction record (2.9): the answer of every engine call and the CARD_TRANSACTION event data. */
export type CardTransaction = Static<typeof TransactionOut>;
export type TransactionStatus = Static<typeof TransactionStatusSchema>;
export type MessageType = CardTransaction['messageType'];
export type Channel = Static<typeof ChannelSchema>;
export type ListTransactionsParams = Static<typeof ListTransactionsQuery>;
export type ResolvedTransactionId = Static<typeof ResolvedOut>[number];

export class TransactionsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Card transactions of the partner, newest first.
   * @example await client.transactions.list({ cardId, status: 'PENDING' });
   */
  list(params: ListTransactionsParams = {}, options?: CallOptions): Promise<Page<CardTransaction>> {
    return this.http.call('GET', '/open-api-corp/transaction/v1/list', { query: { ...params } }, options);
  }
  /** Every transaction matching the filter, page after page (async iterator). */
  listAll(params: Omit<ListTransactionsParams, 'page'> = {}, options?: CallOptions) {
    return paginate((page) => this.list({ ...params, page, pageSize: params.pageSize ?? 100 }, options));
  }


  /** @example await client.transactions.query(transId); */
  query(transId: string, options?: CallOptions): Promise<CardTransaction> {
    return this.http.call('GET', '/open-api-corp/transaction/v1/query', { query: { transId } }, options);
  }

  /**
   * Whether outstanding or posted ids have been posted, and the linked id.
   * @example await client.transactions.resolveIds([outstandingTransactionId]);
   */
  resolveIds(ids: string[], options?: CallOptions): Promise<ResolvedTransactionId[]> {
    return this.http.call('POST', '/card/v1/transaction/id/resolve', { body: { ids } }, options);
  }
}
