import { Type } from '@sinclair/typebox';
import { pagingParameters } from './paging.js';

/** Path, header and query schemas that several statistics route modules declare. */

export const PublicationIdParams = Type.Object({
  publicationId: Type.String({ format: 'uuid', description: 'The id of the publication.' }),
});
export const DataSetIdParams = Type.Object({
  dataSetId: Type.String({ format: 'uuid', description: 'The id of the data set.' }),
});
export const DataSetVersionParams = Type.Object({
  dataSetId: Type.String({ format: 'uuid', description: 'The id of the data set.' }),
  dataSetVersion: Type.String({
    description:
      'A version number such as `1.0`, `1.1` or `2.1.1`, or a wildcard such as `2.*`, `1.2.*` or `*` (the latest Published version in that range).',
    examples: ['1.0', '2.*'],
  }),
});
export const PreviewTokenHeaders = Type.Object({
  'preview-token': Type.Optional(
    Type.String({ description: 'A preview token (uuid) that grants access to a draft version while it is active.' }),
  ),
});
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const DataSetVersionQueryParameter = Type.Optional(
  Type.String({
    description:
      'The version to use: a version number such as `1.0`, or a wildcard such as `2.*`. Omitted (or `*`): the latest published version.',
  }),
);

export const PagedQuery = Type.Object({ ...pagingParameters(10, 20) }, { additionalProperties: false });

export const notModified = { 304: Type.Null({ description: 'Not Modified: the `If-None-Match` ETag is current.' }) };
