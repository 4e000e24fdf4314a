/** A data set version number `major.minor[.patch]`. */
export interface VersionNumber {
  major: number;
  minor: number;
  patch: number;
}

export function parseVersionNumber(text: string): VersionNumber | undefined {
  const match = /^(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) return undefined;
  const version = { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3] ?? 0) };
  return version.major >= 1 ? version : undefined;
}

/** `2.1` when patch is 0, else `2.1.3` (the API's public version form). */
export function formatVersionNumber(v: VersionNumber): string {
  return v.patch > 0 ? `${v.major}.${v.minor}.${v.patch}` : `${v.major}.${v.minor}`;
}

export function compareVersionNumbers(a: VersionNumber, b: VersionNumber): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

export function versionType(v: VersionNumber): 'Major' | 'Minor' | 'Patch' {
  return v.patch > 0 ? 'Patch' : v.minor === 0 ? 'Major' : 'Minor';
}
