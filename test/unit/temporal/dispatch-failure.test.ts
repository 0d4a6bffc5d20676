import { ServiceError } from '@temporalio/client';
import { NamespaceNotFoundError, WorkflowNotFoundError } from '@temporalio/common';
import { dispatchFailureKind, dispatchFailureText, runPriority } from '../../../src/temporal/client';

/** A gRPC error as @grpc/grpc-js raises it, wrapped as the Temporal client wraps it. */
function grpcError(code: number, details: string): ServiceError {
  const cause = Object.assign(new Error(`${code} ${details}`), { code, details, metadata: { getMap: () => ({}) } });
  return new ServiceError(details, { cause });
}

/** The same failure through a worker's NativeConnection: the engine's words are the message, with no details. */
function nativeError(code: number, message: string): ServiceError {
  const cause = Object.assign(new Error(message), { code, details: '', metadata: { getMap: () => ({}) } });
  return new ServiceError('Failed to start Workflow', { cause });
}

test('the engine\'s own words are kept, whichever connection carried them', () => {
  expect(dispatchFailureText(nativeError(3, 'WorkflowId length exceeds limit.'))).toBe('Failed to start Workflow: WorkflowId length exceeds limit.');
  expect(dispatchFailureKind(nativeError(3, 'WorkflowId length exceeds limit.'))).toBe('permanent');
  expect(dispatchFailureKind(nativeError(14, 'tcp connect error'))).toBe('unreachable');
});

test('what the engine will never take is permanent: invalid argument (id or payload past its limits), no such namespace', () => {
  expect(dispatchFailureKind(grpcError(3, 'WorkflowId length exceeds limit.'))).toBe('permanent');
  expect(dispatchFailureKind(grpcError(3, 'Blob data size exceeds limit.'))).toBe('permanent');
  expect(dispatchFailureKind(new NamespaceNotFoundError('gone'))).toBe('permanent');
  expect(dispatchFailureText(grpcError(3, 'WorkflowId length exceeds limit.'))).toBe('WorkflowId length exceeds limit.');
});

test('an engine that does not answer is unreachable: unavailable, past the deadline, not connected yet', () => {
  expect(dispatchFailureKind(grpcError(14, 'connection refused'))).toBe('unreachable');
  expect(dispatchFailureKind(grpcError(4, 'deadline exceeded'))).toBe('unreachable');
  expect(dispatchFailureKind(new Error('Failed to connect before the deadline'))).toBe('unreachable');
});

test('any other answer is a refusal for now (retried up to the cap): rate limited, a run closed before its signal', () => {
  expect(dispatchFailureKind(grpcError(8, 'namespace rate limit exceeded'))).toBe('refused');
  expect(dispatchFailureKind(new WorkflowNotFoundError('workflow execution already completed', 'fulfil/x', undefined))).toBe('refused');
});

test('every run carries its organisation as fairness key; people waiting go before sales, sales before bulk notices', () => {
  expect(runPriority('fulfil-line', 'org-1')).toEqual({ priorityKey: 3, fairnessKey: 'org-1' });
  expect(runPriority('fresh-links', null)).toEqual({ priorityKey: 2, fairnessKey: 'no-organisation' });
  expect(runPriority('notify-buyers', 'org-1').priorityKey).toBe(4);
});
