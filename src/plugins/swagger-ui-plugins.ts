/**
 * swagger-ui's plugins in /docs, given as the page's own JavaScript source. @fastify/swagger-ui writes `uiConfig`
 * into the page's initializer script, each function by its `toString()`; a function compiled here would carry the
 * build's helpers (tsx names every function through a `__name` helper), which the page does not have. So each is a
 * function whose `toString()` is the source written below.
 */

/** A value that @fastify/swagger-ui writes into the page as `source`. */
function pageCode(source: string): () => void {
  return Object.assign(() => undefined, { toString: () => source });
}

/**
 * swagger-ui asks, as soon as a document is loaded, for its `components.securitySchemes` resolved (for the Authorize
 * button), whether the document has any or not; an OpenAPI 3.1 document is resolved as a whole for it (turned into
 * ApiDOM, normalized and serialized back), the page's longest task. For a document without security schemes (the
 * service's) the request is dropped: there is nothing to resolve and nothing to show. Any other request, and every
 * document with security schemes (the register's), goes through.
 */
const SKIP_ABSENT_SECURITY_SCHEMES = `function skipAbsentSecuritySchemes(system) {
  return {
    statePlugins: {
      spec: {
        wrapActions: {
          requestResolvedSubtree: function (requestResolvedSubtree) {
            return function (path) {
              var securitySchemes = ['components', 'securitySchemes'];
              var asksForSecuritySchemes =
                Array.isArray(path) && path.length === 2 && path[0] === securitySchemes[0] && path[1] === securitySchemes[1];
              if (asksForSecuritySchemes && !system.specSelectors.specJson().hasIn(securitySchemes)) return undefined;
              return requestResolvedSubtree(path);
            };
          },
        },
      },
    },
  };
}`;

/**
 * The page's plugins: @fastify/swagger-ui's default (DownloadUrl: the top bar's document selector loads the chosen URL),
 * which `plugins` replaces, then ours.
 */
export const SWAGGER_UI_PLUGINS = [
  pageCode('SwaggerUIBundle.plugins.DownloadUrl'),
  pageCode(SKIP_ABSENT_SECURITY_SCHEMES),
];
