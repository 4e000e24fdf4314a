// The client runs in browsers: the DOM's types, beside the Node types the rest of the project uses.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
