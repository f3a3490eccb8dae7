// The shapes the REST API answers with, for the JSDoc types of the pages. Types only: nothing here
// runs, and the browser never loads this file. Each shape is the server's own zod schema
// (src/schemas*), so a field the server renames fails this type check instead of a page.

/** @typedef {import('../../../schemas.ts').Judge} Judge */
export {};
