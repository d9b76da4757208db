/**
 * Deprecation told in headers, from the contract alone: an operation or parameter marked
 * `deprecated: true` answers `Deprecation` (RFC 9745: `@<unix seconds>` of `x-deprecated-at`),
 * `Link: </v1/docs#operation/<operationId>>; rel="deprecation"` (RFC 9745 §3) and, when the contract
 * gives `x-sunset`, `Sunset` (RFC 8594: an HTTP date). A parameter only when the request sends it; its
 * `Link` names it in a `title` (RFC 8288 §3.4.1), so that a client can tell which one.
 */
import type { Request, Response } from 'express';
import type { Operation } from 'openapi-backend';

interface Notice {
  deprecation: string;
  sunset: string | undefined;
}

export interface Deprecations {
  /** The operation's description; a parameter's `Link` adds its `title`. */
  link: string;
  operation: Notice | undefined;
  parameters: { in: 'query' | 'header'; name: string; notice: Notice }[];
}

function noticeOf(node: Record<string, unknown>, what: string): Notice {
  const at = Date.parse(String(node['x-deprecated-at']));
  // RFC 9745 gives Deprecation no form without a date: the contract must say since when.
  if (Number.isNaN(at)) throw new Error(`${what} is deprecated without a valid x-deprecated-at (an instant or a day)`);
  const sunset = node['x-sunset'] === undefined ? undefined : Date.parse(String(node['x-sunset']));
  if (Number.isNaN(sunset)) throw new Error(`${what} has an x-sunset that is no instant or day`);
  return { deprecation: `@${Math.floor(at / 1000)}`, sunset: sunset === undefined ? undefined : new Date(sunset).toUTCString() };
}

/** What an operation's answers tell of deprecation; undefined when nothing of it is deprecated. */
export function deprecationsOf(operation: Operation): Deprecations | undefined {
  const operationId = operation.operationId!;
  const own = (operation as { deprecated?: boolean }).deprecated ? noticeOf(operation as never, operationId) : undefined;
  // openapi-backend hands the parameters dereferenced, the path item's merged in.
  const parameters = (operation.parameters ?? []).flatMap((raw): Deprecations['parameters'] => {
    const parameter = raw as unknown as Record<string, unknown> & { in: string; name: string; deprecated?: boolean };
    if (!parameter.deprecated) return [];
    if (parameter.in !== 'query' && parameter.in !== 'header') throw new Error(`${operationId}: only query and header parameters can be deprecated (${parameter.name})`);
    return [{ in: parameter.in, name: parameter.name, notice: noticeOf(parameter, `${operationId}'s ${parameter.name}`) }];
  });
  if (!own && parameters.length === 0) return undefined;
  return { link: `</v1/docs#operation/${operationId}>; rel="deprecation"; type="text/html"`, operation: own, parameters };
}

export function tellDeprecation(deprecations: Deprecations, req: Request, res: Response): void {
  const used = deprecations.parameters.filter((parameter) => (parameter.in === 'query' ? req.query[parameter.name] !== undefined : req.get(parameter.name) !== undefined));
  const notices = [...(deprecations.operation ? [deprecations.operation] : []), ...used.map((parameter) => parameter.notice)];
  if (notices.length === 0) return;
  // Several at once (the operation and a parameter): the earliest deprecation and sunset tell the most.
  const earliest = (values: string[], order: (value: string) => number) => values.sort((a, b) => order(a) - order(b))[0];
  res.setHeader('Deprecation', earliest(notices.map((notice) => notice.deprecation), (value) => Number(value.slice(1)))!);
  // A parameter's own sunset, or the operation's when that comes first: the request stops working at the earlier.
  const sunset = earliest(notices.flatMap((notice) => (notice.sunset ? [notice.sunset] : [])), Date.parse);
  if (sunset) res.setHeader('Sunset', sunset);
  if (deprecations.operation) res.append('Link', deprecations.link);
  for (const parameter of used) res.append('Link', `${deprecations.link}; title="${parameter.in} parameter ${parameter.name}"`);
}
