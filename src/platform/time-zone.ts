/**
 * IANA time zones (issue 31): their names and the offset of an instant in a zone. Node's ICU knows
 * the zone rules; no domain here (the velocity domain uses it for its periods, partners to check a
 * setting).
 */

const AREAS = '(Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific)';
/** Area/Location[/Sublocation], or UTC. */
const ZONE_NAME = new RegExp(`^(${AREAS}(/[A-Za-z0-9_+-]+){1,2}|UTC|Etc/UTC)$`, 'i');
const REGION = new RegExp(`^${AREAS}/`);

/**
 * The canonical spelling of an IANA zone name ('asia/hong_kong' -> 'Asia/Hong_Kong', 'Etc/UTC' ->
 * 'UTC'), or null when the name is not an IANA zone. Offsets such as '+08:00' or 'GMT+8' and
 * abbreviations and legacy names such as 'HKT', 'EST5EDT', 'US/Eastern' or 'Etc/GMT+8' are not accepted: only Area/Location names and UTC.
 */
export function canonicalTimeZone(name: string): string | null {
  if (name.length > 64 || !ZONE_NAME.test(name)) return null;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  if (resolved === 'UTC') return 'UTC';
  return REGION.test(resolved) ? resolved : null;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/**
 * An instant as local time in a zone with its offset, with milliseconds as every timestamp of a
 * response (D11): 2026-11-26T00:00:00.000+08:00, 2026-03-08T03:00:00.000-04:00, and for UTC exactly
 * D11's form, 2026-05-17T10:00:00.000Z.
 */
export function zonedIso(at: Date, zone: string): string {
  const parts = Object.fromEntries(formatter(zone).formatToParts(at).map((p) => [p.type, p.value]));
  const local = `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
  const millis = `.${String(at.getUTCMilliseconds()).padStart(3, '0')}`;
  if (zone === 'UTC') return `${local}${millis}Z`;
  const wholeSeconds = Math.floor(at.getTime() / 1000) * 1000;
  const offsetMinutes = Math.round((Date.parse(`${local}Z`) - wholeSeconds) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${millis}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
