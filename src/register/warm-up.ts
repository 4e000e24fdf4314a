import { otherUkInstitutionId } from './degrees/reference-codes.js';
import { fundingTables } from './funding.js';
import { referenceData } from './reference-data.js';

/**
 * Loads what the register reads on its first write (the HESA code lists, the funding rules): parsing their YAML
 * is slow enough that an instance's first create would otherwise wait for it (seen in `npm run bench:cluster`).
 */
export function loadRegisterReferenceData(): void {
  referenceData();
  fundingTables();
  otherUkInstitutionId();
}
