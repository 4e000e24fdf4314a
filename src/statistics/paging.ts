/** The statistics API's paging: the `page` and `pageSize` parameters and the `paging` object of a list. */
import { Type, type TProperties } from '@sinclair/typebox';

/** `page` and `pageSize` query parameters with the reference's defaults and bounds. */
export function pagingParameters(defaultPageSize: number, maxPageSize: number) {
  return {
    page: Type.Optional(
      Type.Integer({ minimum: 1, default: 1, description: 'The page of results to fetch. Minimum 1.' }),
    ),
    pageSize: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: maxPageSize,
        default: defaultPageSize,
        description: `The maximum number of results per page (1 to ${maxPageSize}, default ${defaultPageSize}).`,
      }),
    ),
  } satisfies TProperties;
}

export interface PagingViewModel {
  page: number;
  pageSize: number;
  totalResults: number;
  totalPages: number;
}

/** The paging object; `totalPages` is 1 when there are no results, as in the reference. */
export function pagingOf(page: number, pageSize: number, totalResults: number): PagingViewModel {
  return { page, pageSize, totalResults, totalPages: Math.trunc((totalResults - 1) / pageSize) + 1 };
}
