/**
 * `npm run release -- <major|minor|patch|X.Y.Z> [--date YYYY-MM-DD]`: makes a release of the contract,
 * the one deliberate act the breaking-change gate compares with (docs/decisions.md, "Breaking changes"):
 *   1. refuses when CHANGELOG.md's Unreleased section is empty, or when the gate fails against the last
 *      release (with the new version, so that a new major declares its breaks);
 *   2. moves the Unreleased section under `## [X.Y.Z] - <date>` and leaves an empty Unreleased above it;
 *   3. sets `info.version` in openapi/openapi.yaml and regenerates generated/;
 *   4. stores the bundled contract as openapi/releases/X.Y.Z.json, the gate's next base.
 * It commits and tags nothing: review the diff, commit it, and tag `api-vX.Y.Z` if you like.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { judge, releasedContractPath, releasedVersions, report } from './breakingChanges.js';

/** The version after `latest` for a `major`/`minor`/`patch` step, or `wanted` itself when it is newer. */
export function nextVersion(latest: string, wanted: string): string {
  const [major, minor, patch] = latest.split('.').map(Number) as [number, number, number];
  const next = { major: `${major + 1}.0.0`, minor: `${major}.${minor + 1}.0`, patch: `${major}.${minor}.${patch + 1}` }[wanted] ?? wanted;
  const parts = next.split('.').map(Number);
  if (!/^\d+\.\d+\.\d+$/.test(next)) throw new Error(`release: ${wanted} is neither major, minor, patch nor a version X.Y.Z`);
  const newer = parts[0]! - major || parts[1]! - minor || parts[2]! - patch;
  if (newer <= 0) throw new Error(`release: ${next} is not newer than the last release, ${latest}`);
  return next;
}

/** The changelog with its Unreleased section made the release `version` of `date`, and a new empty Unreleased above. */
export function releasedChangelog(changelog: string, version: string, date: string): string {
  const match = /^## \[Unreleased\][^\n]*\n([\s\S]*?)(?=^## )/m.exec(changelog);
  if (!match) throw new Error('release: CHANGELOG.md has no `## [Unreleased]` section followed by a release');
  if (match[1]!.trim() === '') throw new Error('release: the Unreleased section of CHANGELOG.md is empty: nothing to release');
  return `${changelog.slice(0, match.index)}## [Unreleased]\n\n## [${version}] - ${date}\n\n${match[1]!.trim()}\n\n${changelog.slice(match.index + match[0].length)}`;
}

/** openapi.yaml with `info.version` set: the first `version:` line, which is info's (the file starts with info). */
export function withInfoVersion(yaml: string, version: string): string {
  const line = /^( {2}version: ).*$/m;
  if (!line.test(yaml)) throw new Error('release: openapi/openapi.yaml has no `  version:` line under info');
  return yaml.replace(line, `$1${version}`);
}

/** The bundle as released: the code samples are the generator's, not the contract's. */
export function releasedContract(bundle: Record<string, any>): Record<string, any> {
  const copy = structuredClone(bundle);
  for (const item of Object.values<Record<string, any>>(copy.paths ?? {})) {
    for (const operation of Object.values<Record<string, unknown>>(item)) if (operation && typeof operation === 'object') delete operation['x-codeSamples'];
  }
  return copy;
}

function main(args: string[]): void {
  const root = resolve(import.meta.dirname, '..');
  const wanted = args.find((arg) => !arg.startsWith('--'));
  const dateAt = args.indexOf('--date');
  const date = dateAt >= 0 ? args[dateAt + 1]! : new Date().toISOString().slice(0, 10);
  if (!wanted) throw new Error('usage: npm run release -- <major|minor|patch|X.Y.Z> [--date YYYY-MM-DD]');
  const [latest] = releasedVersions(root);
  if (!latest) throw new Error('release: no earlier release in openapi/releases/');
  const version = nextVersion(latest, wanted);
  const changelogPath = join(root, 'CHANGELOG.md');
  const changelog = releasedChangelog(readFileSync(changelogPath, 'utf8'), version, date);

  const contract = JSON.parse(readFileSync(join(root, 'generated/openapi.json'), 'utf8'));
  const before = JSON.parse(readFileSync(releasedContractPath(root, latest), 'utf8'));
  // Judged as it will be released: with the new version, and the section now named after it.
  if (!report(judge(before, { ...contract, info: { ...contract.info, version } }, changelog))) throw new Error(`release: ${version} would break the gate against ${latest}; fix the above first`);

  writeFileSync(changelogPath, changelog);
  const yamlPath = join(root, 'openapi/openapi.yaml');
  writeFileSync(yamlPath, withInfoVersion(readFileSync(yamlPath, 'utf8'), version));
  execFileSync('npm', ['run', '--silent', 'generate'], { cwd: root, stdio: 'inherit' });
  const bundle = JSON.parse(readFileSync(join(root, 'generated/openapi.json'), 'utf8'));
  writeFileSync(releasedContractPath(root, version), `${JSON.stringify(releasedContract(bundle), null, 2)}\n`);
  console.log(`Released ${version} (${date}): CHANGELOG.md, openapi/openapi.yaml, generated/ and openapi/releases/${version}.json. Review, commit, and tag api-v${version} if you like.`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 1;
  }
}
