/**
 * Formats checked in more than one place, each written once: ids (uuid), school and provider numbers (URN, UKPRN)
 * and UK postcodes. Pure.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A uuid in its canonical 8-4-4-4-12 hex form (either case). Not a type guard: a string that fails is still a string. */
export function isUuid(value: unknown): boolean {
  return typeof value === 'string' && UUID.test(value);
}

/** A school's unique reference number: 6 digits. */
export function isUrn(value: string): boolean {
  return /^\d{6}$/.test(value);
}

/** A UK provider reference number: 8 digits. */
export function isUkprn(value: string): boolean {
  return /^\d{8}$/.test(value);
}

/**
 * A full UK postcode: outward code, any white space (none too), inward code; or GIR 0AA. As the real service's
 * validator (the uk_postcode gem), which strips the value and allows any run of spaces between the two halves, so
 * `BN1  1AA` is valid.
 */
const UK_POSTCODE = /^(?:[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}|GIR\s*0AA)$/i;

export function isUkPostcode(value: string): boolean {
  return UK_POSTCODE.test(value.trim());
}
