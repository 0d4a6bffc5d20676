/**
 * OpenTelemetry traces, one per sale: the webhook request (Fastify), the outbox row's dispatch, the
 * workflow start, the workflow run, its activities and the SMTP send share one trace id. Off unless
 * OTEL_EXPORTER_OTLP_ENDPOINT is set; then installed once per process, before the app, the client
 * and the worker are made (they ask `activeTracing()` whether to add their interceptors).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Config } from '../config';

export interface Tracing {
  enabled: boolean;
  /** Where the worker's sink hands the spans its workflows make inside the sandbox. */
  spanProcessor: SpanProcessor;
  resource: Resource;
}

const TRACING_OFF: Tracing = { enabled: false, spanProcessor: new NoopSpanProcessor(), resource: Resource.empty() };

let installed: { tracing: Tracing; provider: NodeTracerProvider } | undefined;

/** The process's tracing: what `installTracing` set up, else off. */
export function activeTracing(): Tracing {
  return installed?.tracing ?? TRACING_OFF;
}

/**
 * Installs the process-wide tracer provider (W3C trace context, AsyncLocalStorage context) when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, or with the given processor (tests: an in-memory exporter).
 * A second call keeps the first installation.
 */
export function installTracing(settings: Config['tracing'], spanProcessor?: SpanProcessor): Tracing {
  if (installed) return installed.tracing;
  const processor = spanProcessor
    ?? (settings.otlpEndpoint ? new BatchSpanProcessor(new OTLPTraceExporter({ url: `${settings.otlpEndpoint}/v1/traces` })) : undefined);
  if (!processor) return TRACING_OFF;
  const resource = new Resource({ 'service.name': settings.serviceName });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  installed = { tracing: { enabled: true, spanProcessor: processor, resource }, provider };
  return installed.tracing;
}

/** Flushes what is buffered and removes the provider (process shutdown, end of a test). */
export async function uninstallTracing(): Promise<void> {
  if (!installed) return;
  const { provider } = installed;
  installed = undefined;
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

/** The current trace context as a W3C `traceparent` to keep beside work done later; null when none. */
export function currentTraceParent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

const tracer = () => trace.getTracer('delivery-service');

/**
 * Runs `work` in a span named `name`, a child of the kept `traceParent` when there is one (work
 * taken from the outbox) or of the current span. A no-op span when tracing is off.
 */
export async function inSpan<T>(
  name: string,
  options: { traceParent?: string | null; kind?: SpanKind; attributes?: Record<string, string | number> },
  work: () => Promise<T>,
): Promise<T> {
  const parent: Context = options.traceParent ? propagation.extract(ROOT_CONTEXT, { traceparent: options.traceParent }) : context.active();
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

export { SpanKind };
