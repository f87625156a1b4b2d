// ESLint for the dashboard's scripts (ADR-0154). The files are classic scripts concatenated into one inline
// <script> (packages/tsumugi-scheduler/src/tsumugi_scheduler/dashboard/page.py), so each file names what it
// takes from the others in a `/* global ... */` comment and what it offers them in an `/* exported ... */`
// comment; no-undef fails on any other name, no-unused-vars on a top-level name neither used nor exported.
import globals from "globals";

export default [
  {
    files: ["*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: { ...globals.browser },
    },
    linterOptions: { reportUnusedDisableDirectives: "error", noInlineConfig: false },
    rules: {
      "no-undef": "error",
      "no-redeclare": ["error", { builtinGlobals: true }],
      "no-unused-vars": ["error", { vars: "all", args: "none", caughtErrors: "none" }],
    },
  },
];
