import type { Queryable } from '../../platform/db/db.ts';
import { findCustomer } from '../customers/index.ts';
import { findOrganization } from '../organizations/index.ts';

/**
 * What velocity needs to know about organizations, employees and cards. Organizations and
 * employees are lower domains, read through their public entries (tenant isolation is theirs:
 * another partner's id is null, like a missing one). Cards sit above velocity (a card application
 * checks and binds rules), so cards are reached through the `CardLookup` port, which the cards
 * domain implements and src/app.ts passes in with the velocity routes' dependencies.
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

/** The port to the cards domain: the partner's card (another partner's is null, like a missing one). */
export interface CardLookup {
  cardFacts(q: Queryable, partnerId: string, cardId: string): Promise<CardFacts | null>;
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
