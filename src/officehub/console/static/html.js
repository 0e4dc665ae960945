// Preact with htm: views written as components in tagged templates, no build step and no
// other host (the three vendor-*.js files; their origin and licences in README.md).
//   import { html, render, useState } from "./html.js";
//   render(html`<p>${label}</p>`, element);
import { h, render, Fragment } from "./vendor-preact.js";
import htm from "./vendor-htm.js";

export const html = htm.bind(h);
export { h, render, Fragment };
export {
  useCallback,
  useEffect,
  useId,
  useMemo,
  useReducer,
  useRef,
  useState,
} from "./vendor-preact-hooks.js";
