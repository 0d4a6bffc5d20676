/**
 * OpenTelemetry traces, one per sale: the webhook request (Fastify), the outbox row's dispatch, the
 * workflow start, the workflow run, its activities and the SMTP send share one trace id. Off unless
 * OTEL_EXPORTER_OTLP_ENDPOINT is set; then installed once per process, before the app, the client
 * and the worker are made (they ask `activeTracing()` whether to add their interceptors).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Config } from '../config';

/**
 * On, the OpenTelemetry modules the process uses are loaded (by `installTracing`, not at start-up:
 * the SDK, its exporter and Temporal's interceptors are half a second of loading, paid again by
 * every test file, and tracing is off by default).
 */
export type Tracing =
  | { enabled: false }
  | {
    enabled: true;
    /** Where the worker's sink hands the spans its workflows make inside the sandbox. */
    spanProcessor: SpanProcessor;
    resource: Resource;
    temporalInterceptors: typeof import('@temporalio/interceptors-opentelemetry');
  };

const TRACING_OFF: Tracing = { enabled: false };

/** Attributes that may hold a request's raw URL: `/d/<token>`, `/unsubscribe/<token>`, `?secret=`, `?email=`. */
const URL_ATTRIBUTES = ['url.full', 'url.path', 'url.query', 'http.url', 'http.target'];

/**
 * What a span may say once it leaves the process: the route template instead of the URL, an
 * exception by its type (OpenTelemetry puts the error's code there when it has one), no status
 * message. Messages and stack traces of errors can hold anything (an SMTP rejection names the
 * recipient, an ORM error inlines its query's values), and the libraries that make most spans
 * (@fastify/otel, Temporal's interceptors) record them whole; so it is done here, for every span.
 */
function withoutPersonalData(span: ReadableSpan): ReadableSpan {
  const attributes: Attributes = Object.fromEntries(Object.entries(span.attributes).filter(([key]) => !URL_ATTRIBUTES.includes(key)));
  const route = span.attributes['http.route'];
  if (route !== undefined) attributes['url.path'] = route;
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanId: span.parentSpanId,
    startTime: span.startTime,
    endTime: span.endTime,
    status: { code: span.status.code },
    attributes,
    links: span.links,
    events: span.events.map((event) => (event.name === 'exception'
      ? { ...event, attributes: { 'exception.type': event.attributes?.['exception.type'] ?? 'Error' } }
      : event)),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationLibrary: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/** Hands the processor it wraps (the exporter's) every span as `withoutPersonalData` leaves it. */
class PrivateSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parent: Context): void {
    this.next.onStart(span, parent);
  }

  onEnd(span: ReadableSpan): void {
    this.next.onEnd(withoutPersonalData(span));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

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
export async function installTracing(settings: Config['tracing'], spanProcessor?: SpanProcessor): Promise<Tracing> {
  if (installed) return installed.tracing;
  const { otlpEndpoint } = settings;
  if (!spanProcessor && !otlpEndpoint) return TRACING_OFF;
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, { Resource }, temporalInterceptors] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'), import('@opentelemetry/sdk-trace-base'), import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'), import('@temporalio/interceptors-opentelemetry'),
  ]);
  const exporting = spanProcessor ?? new BatchSpanProcessor(new OTLPTraceExporter({ url: `${otlpEndpoint}/v1/traces` }));
  // Also the processor of the spans workflows make in the sandbox (the worker's sink).
  const processor = new PrivateSpanProcessor(exporting);
  const resource = new Resource({ 'service.name': settings.serviceName });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  installed = { tracing: { enabled: true, spanProcessor: processor, resource, temporalInterceptors }, provider };
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
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

export { SpanKind };
