/**
 * The failure converter of clients, workers and the workflow sandbox (loaded by path, as the SDK
 * requires): a failure's message and stack trace travel as an encoded payload, which the payload
 * codec encrypts, instead of as plain text in the history.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
