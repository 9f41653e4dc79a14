import type { Queryable } from '../../platform/db/db.ts';
import { findCard } from '../cards/store.ts';
import { findCustomer } from '../customers/store.ts';
import { findOrganization } from '../organizations/store.ts';

/**
 * What velocity needs to know about organizations, employees and cards, read through the stores of
 * their own domains (tenant isolation is theirs: another partner's id is null, like a missing one).
 */

export interface OrganizationFacts {
  organizationId: string;
  fundingCurrencies: string[];
}

export interface EmployeeFacts {
  customerId: string;
  organizationId: string;
  /** Lifecycle ended (D16): quotas can no longer be read, rules can no longer be bound. */
  terminated: boolean;
}

export interface CardFacts {
  cardId: string;
  organizationId: string;
  /** The holder (D23): a company card (ORGANIZATION) or an employee card (CUSTOMER). */
  subjectType: 'ORGANIZATION' | 'CUSTOMER';
  subjectId: string;
  status: 'ACTIVE' | 'BLOCKED' | 'CANCELLED';
  settlementCurrencies: string[];
}

export async function organizationFacts(q: Queryable, partnerId: string, organizationId: string): Promise<OrganizationFacts | null> {
  const org = await findOrganization(q, partnerId, organizationId);
  return org ? { organizationId: org.organizationId, fundingCurrencies: [...org.fundingCurrencies] } : null;
}

export async function employeeFacts(q: Queryable, partnerId: string, customerId: string): Promise<EmployeeFacts | null> {
  const customer = await findCustomer(q, partnerId, customerId);
  return customer
    ? { customerId: customer.customerId, organizationId: customer.organizationId, terminated: customer.lifecycle === 'TERMINATED' }
    : null;
}

export async function cardFacts(q: Queryable, partnerId: string, cardId: string): Promise<CardFacts | null> {
  const card = await findCard(q, partnerId, cardId);
  return card
    ? {
      cardId: card.cardId,
      organizationId: card.organizationId,
      subjectType: card.subjectType,
      subjectId: card.subjectId,
      status: card.status,
      settlementCurrencies: [...card.settlementCurrencies],
    }
    : null;
}
