/**
 * An email address anywhere in a text. Not any `@`: libraries name themselves in span attributes
 * and stack traces (`@fastify/otel`, `@temporalio/worker@1.24.0`, `/node_modules/@mikro-orm/`).
 */
export const EMAIL_ADDRESS = /[\w.+-]+@[\w-]+(\.[\w-]+)*\.[a-z]{2,}/i;
