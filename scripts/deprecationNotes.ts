/**
 * The docs page's word on deprecation: Redoc marks a deprecated operation or parameter, but shows
 * neither `x-deprecated-at` nor `x-sunset`. The bundle (as with the code samples, not openapi/) gets
 * both dates appended to the description of each deprecated operation and parameter.
 */
type Node = Record<string, any>;

const methods = ['get', 'put', 'post', 'delete', 'patch'];

function withDates(node: Node): void {
  if (!node.deprecated) return;
  const sunset = node['x-sunset'] === undefined ? 'no sunset set yet' : `sunset ${node['x-sunset']}: it may stop working after that`;
  const note = `**Deprecated** since ${node['x-deprecated-at']}; ${sunset}.`;
  node.description = node.description ? `${node.description}\n\n${note}` : note;
}

/** The bundled document, its deprecated operations' and parameters' descriptions told both dates (changed in place). */
export function withDeprecationDates<Document extends object>(document: Document): Document {
  const bundle = document as Node;
  for (const parameter of Object.values<Node>(bundle.components?.parameters ?? {})) withDates(parameter);
  for (const item of Object.values<Node>(bundle.paths ?? {})) {
    for (const parameter of item.parameters ?? []) withDates(parameter);
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      withDates(operation);
      for (const parameter of operation.parameters ?? []) withDates(parameter);
    }
  }
  return document;
}
