/**
 * Sandbox quick start (README "First ten minutes"): a company, an employee with approved KYC, a
 * virtual card issued, the company pool funded, a purchase authorized, everything read back with
 * exact amounts. Run against a service started with `npm start`:
 *
 *   npm run -s admin -- partner-create --name "Acme Wallet" --json > partner.json
 *   npx tsx examples/quickstart.ts partner.json
 *
 * BASE_URL overrides the service address (default http://localhost:8080).
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { CardServiceClient, CardServiceError, decimal, decimalText } from '../sdk/index.ts';

const file = process.argv[2] ?? 'partner.json';
const { apiKey, secretKey } = readPartner(file);
const baseUrl = process.env.BASE_URL ?? `http://localhost:${process.env.PORT ?? 8080}`;
const client = new CardServiceClient({ baseUrl, apiKey, secretKey });
const suffix = randomBytes(3).toString('hex');

try {
  // 1. A company with a USD funding pool.
  const org = await client.organizations.create({
    organizationRef: `acme-${suffix}`, organizationName: 'Acme Trading Ltd', companyRegistrationNumber: 'HK-12345678',
    countryCode: 'HK', fundingCurrencies: ['USD'],
  });
  console.log(`company   ${org.organizationId} ${org.status}`);

  // 2. An employee; KYC starts PENDING and cards need APPROVED: in sandbox you decide it yourself.
  const employee = await client.customers.create({
    organizationId: org.organizationId, customerRef: `alice-${suffix}`, firstName: 'Alice', lastName: 'Tan',
    phoneCountryCode: 'HK', phoneNumber: '91234567', email: 'alice.tan@example.com',
  });
  await client.sandbox.kycDecision({ customerId: employee.customerId, decision: 'APPROVED' });
  console.log(`employee  ${employee.customerId} KYC ${(await client.customers.query(employee.customerId)).kycStatus}`);

  // 3. A virtual card on a shared-balance profile (it spends from the company pool).
  const { result: profiles } = await client.cards.listProfiles({ balanceMode: 'SHARED', status: 'ACTIVE' });
  const profile = profiles.find((p) => p.cardForm === 'VIRTUAL' && p.settlementCurrencies.includes('USD'));
  if (!profile) throw new Error('no active shared virtual USD card profile in this sandbox');
  const application = await client.cards.apply({
    organizationId: org.organizationId, cardApplyRef: `card-${suffix}`, cardProfileId: profile.cardProfileId,
    subjectType: 'CUSTOMER', subjectId: employee.customerId, custodianCustomerId: employee.customerId, cardholderName: 'ALICE TAN',
  });
  // Issuance is asynchronous (CARD_CREATED webhook); here we poll the application instead.
  let applied = application;
  for (let i = 0; i < 60 && (applied.status === 'PENDING' || applied.status === 'PROCESSING'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    applied = await client.cards.queryApply(application.cardApplyId);
  }
  if (applied.status !== 'SUCCESS') throw new Error(`card application ${applied.status} ${applied.rejectReason ?? ''}`);
  const card = await client.cards.query(applied.cardId!);
  console.log(`card      ${card.cardId} ${card.cardNetwork} ${card.panFirst6}******${card.panLast4} ${card.status}`);

  // 4. Fund the company pool (sandbox deposit) and spend on the card. Amounts are exact decimals:
  //    send decimal('...'), read with decimalText(...) (never through a JS number).
  await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('1000.00') });
  const purchase = await client.sandbox.authorize({
    cardId: card.cardId, amount: decimal('12.34'), currency: 'USD', merchantName: 'Blue Bottle Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS',
  });
  console.log(`purchase  ${purchase.transId} approved=${purchase.approved} amount=${decimalText(purchase.amount)} ${purchase.currency}`);
  if (!purchase.approved) {
    // A decline is an answer, not an error: its reason (and, for some reasons, a detail) says why.
    const detail = purchase.declineDetail ? ` detail=${JSON.stringify(purchase.declineDetail)}` : '';
    console.log(`declined  reason=${purchase.declineReason}${detail}`);
    if (purchase.declineReason === 'PARTNER_TIMEOUT' || purchase.declineReason === 'PARTNER_DECLINED') {
      console.log('          your auth_url decides this card\'s spend and declined or did not answer: check it with client.sandbox.testAuthUrl() (docs/auth-url.md)');
    }
  }

  // 5. Read the balance back: available = 1000.00 - 12.34 held by the authorization.
  const balance = await client.funding.balance(org.organizationId);
  for (const pool of balance.pools) {
    console.log(`pool      ${pool.currency} available=${decimalText(pool.available)} pending=${decimalText(pool.pending)} total=${decimalText(pool.total)}`);
  }
} catch (err) {
  if (err instanceof CardServiceError) {
    console.error(`failed: ${err.code} (HTTP ${err.httpStatus}, request ${err.requestId ?? '-'}): ${err.serviceMessage}`);
    if (err.code === 'NETWORK_ERROR') console.error(`is the service running (npm start)? BASE_URL sets its address (now ${baseUrl})`);
    process.exit(1);
  }
  throw err;
}

/** The partner file the admin command wrote; a missing or empty one (the command failed) is one line, not a stack trace. */
function readPartner(path: string): { apiKey: string; secretKey: string } {
  try {
    const partner = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof partner?.apiKey === 'string' && typeof partner?.secretKey === 'string') return partner;
  } catch { /* answered below */ }
  console.error(`${path} is not a partner file with apiKey and secretKey: create it with npm run -s admin -- partner-create --name "Acme Wallet" --json > ${path}`);
  process.exit(2);
}
