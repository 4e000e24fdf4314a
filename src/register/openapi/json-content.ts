/** The JSON pieces the register's hand-written OpenAPI paths (extensions, events) are made of. */

/** A response with a JSON body: its description and schema. */
export function jsonResponse(schema: unknown, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/** A required JSON request body `{ "data": … }`; with `dataRequired`, `data` itself is required too. */
export function dataRequestBody(data: unknown, dataRequired = false) {
  return {
    required: true,
    content: {
      'application/json': {
        schema: { type: 'object', ...(dataRequired ? { required: ['data'] } : {}), properties: { data } },
      },
    },
  };
}
