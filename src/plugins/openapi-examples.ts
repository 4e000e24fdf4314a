/**
 * Examples in the OpenAPI documents: each API keeps a table of example requests (src/statistics/openapi-examples.ts,
 * src/register/openapi/examples.ts) and the answers this service gave to them, recorded by
 * test/docs/examples.test.ts into a JSON file beside the table. The documents show both; the test sends every
 * request again to a fresh server and fails when an answer differs, so an example cannot drift from the service.
 */
import { readFileSync } from 'node:fs';

type Json = Record<string, unknown>;

/** A request as a test sends it and the document shows it. */
export interface ExampleRequest {
  method: string;
  /** The document's path template, e.g. `/trainees/{trainee_id}`. */
  path: string;
  pathParams?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** A JSON body (any value), or `rawBody` for bytes that are not JSON. */
  body?: unknown;
  rawBody?: string;
}

/** One recorded example: what was sent and what the service answered. */
export interface RecordedExample {
  /** The example's key in the document, unique within its operation. */
  name: string;
  summary: string;
  request: ExampleRequest;
  status: number;
  contentType: string;
  /** The answer's body: parsed JSON, or text (a CSV shows its first lines). */
  response: unknown;
}

/** Recorded examples of one document: operationId → examples, in the order they were sent. */
export type RecordedDocumentExamples = Record<string, RecordedExample[]>;

/** The recorded examples in `file`, per document: read on the first call (when a document is first asked for, not at start). */
export function recordedExamples(file: string): () => Record<string, RecordedDocumentExamples> {
  let recorded: Record<string, RecordedDocumentExamples> | undefined;
  return () => (recorded ??= JSON.parse(readFileSync(file, 'utf8')) as Record<string, RecordedDocumentExamples>);
}

/** Per operationId: its tag and a one-paragraph description (what it does, what it needs, what goes wrong). */
export type OperationDocs = Record<string, { tag: string; description: string }>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Every operation of a document with its path and method. */
export function operationsOf(document: Json): Array<{ path: string; method: string; operation: Json }> {
  const result: Array<{ path: string; method: string; operation: Json }> = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (METHODS.includes(method)) result.push({ path, method, operation: operation as Json });
    }
  }
  return result;
}

function addExample(target: Json, name: string, summary: string, value: unknown) {
  const examples = ((target.examples as Json | undefined) ??= {});
  examples[name] = { summary, value };
}

function parametersOf(pathItem: Json, operation: Json): Json[] {
  return [
    ...((pathItem.parameters as Json[] | undefined) ?? []),
    ...((operation.parameters as Json[] | undefined) ?? []),
  ];
}

/**
 * A copy of the document with the recorded examples on its parameters, request bodies and responses, and each
 * operation's tag and description from `docs` (the description written first, then any the operation had).
 */
export function withExamples(document: Json, docs: OperationDocs, recorded: RecordedDocumentExamples): Json {
  // A JSON copy: the builders share parameter and body objects between operations.
  const copy = JSON.parse(JSON.stringify(document)) as Json;
  for (const { path, operation } of operationsOf(copy)) {
    const id = operation.operationId as string | undefined;
    if (!id) continue;
    const doc = docs[id];
    if (doc) {
      operation.tags = [doc.tag];
      operation.description = operation.description
        ? `${doc.description} ${operation.description as string}`
        : doc.description;
    }
    const pathItem = (copy.paths as Record<string, Json>)[path]!; // operationsOf walks copy.paths
    // Successes first: swagger-ui offers the first example of a request body by default.
    const examples = [...(recorded[id] ?? [])].sort((a, b) => Number(a.status >= 400) - Number(b.status >= 400));
    for (const example of examples) {
      const { request } = example;
      const values: Array<[string, Record<string, string> | undefined]> = [
        ['path', request.pathParams],
        ['query', request.query],
        ['header', request.headers],
      ];
      for (const [location, given] of values) {
        for (const [name, value] of Object.entries(given ?? {})) {
          const parameter = parametersOf(pathItem, operation).find(
            (p) => p.in === location && String(p.name).toLowerCase() === name.toLowerCase(),
          );
          // A path parameter is shared by the operations of its path: its first example is the one shown.
          if (parameter && location === 'path') parameter.example ??= value;
          else if (parameter && !(parameter.examples as Json | undefined)?.[example.name])
            addExample(parameter, example.name, example.summary, value);
        }
      }
      const content = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      const jsonBody = content?.['application/json'];
      if (jsonBody && request.body !== undefined) addExample(jsonBody, example.name, example.summary, request.body);
      // An answer without a body (204) shows its request only.
      if (!example.contentType) continue;
      const responses = (operation.responses ??= {}) as Record<string, Json>;
      const response = responses[String(example.status)];
      if (!response)
        throw new Error(`${id}: example ${example.name} answers ${example.status}, which the document does not list`);
      const media = (response.content ??= {}) as Record<string, Json>;
      const type = example.contentType.split(';')[0]!.trim();
      const entry = (media[type] ??= { schema: { type: 'string' } });
      addExample(entry, example.name, example.summary, example.response);
    }
  }
  return copy;
}
