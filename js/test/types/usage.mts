// Compile-time test of the published declarations (resolved through the package's exports):
// `npm run typecheck` fails when a declaration and the documented usage disagree.
import { Sequences, Sequence, isMongoSeqError, core, JS_ERROR_CODES, localDates } from "mongo-seq";
import type { SequenceNumber, CounterState, SeriesSealReport } from "mongo-seq";
import type { Collection, Db } from "mongodb";

export async function usage(db: Db, users: Collection): Promise<void> {
  const seqs = new Sequences(db, { collection: "counters" });
  const userIds: Sequence = seqs.sequence("userid", { block: 100, start: 1, step: 1, max: 2n ** 60n, scope: null, format: "U{seq}" });
  const next: SequenceNumber = await userIds.next();
  const many: SequenceNumber[] = await userIds.nextMany(1000);
  const current: SequenceNumber | null = await userIds.current();
  const outcome = await userIds.setNext(5000, { force: true });
  const created: boolean = outcome.created;
  const seeded: CounterState = await userIds.seedFromMax(users, "_id");
  await userIds.seedFromMax(10n);
  const one = await seqs.insertOne(users, { name: "Sarah C." }, { sequence: "userid", field: "_id" });
  const all = await seqs.insertMany(users, [{ a: 1 }], { sequence: userIds, formatField: "code" });
  const optimistic = await seqs.insertOptimistic(users, { name: "Grace H." }, { maxAttempts: 200 });
  const assigned: SequenceNumber = await seqs.waitForNumber(users, one.insertedId, { field: "seq", timeoutMs: 5000 });
  const formatted: string | undefined = userIds.format(42);
  const codes: string[] = core.errorCodes();
  const jsCodes: readonly string[] = JS_ERROR_CODES;
  void [next, many, current, created, seeded, all.values, optimistic.value, assigned, formatted, codes, jsCodes];
  try {
    seqs.sequence("bad", { step: 0 });
  } catch (error) {
    if (isMongoSeqError(error)) {
      const code: string = error.code;
      void code;
    }
  }
  // Business document series.
  const invoices = seqs.sequence("invoices", { reset: "yearly", timeZone: "Europe/Paris", yearStart: 4, format: "INV-{yyyy}-{seq:06}" });
  const dated: SequenceNumber = await invoices.next({ date: new Date() });
  const scopedDated: SequenceNumber[] = await invoices.nextMany(2, { tenant: "acme" }, { date: Date.now() });
  const entry = await invoices.nextFormatted({ date: 0 });
  const period: string | undefined = invoices.periodOf(new Date());
  const text: string | undefined = invoices.format(entry.value, entry.period);
  await invoices.setNext(10, { period: "2026" });
  // A sealed series verified as stored.
  const sealed = seqs.sequence("sealed", { reset: "yearly", sealFields: ["total", "customer.name"] });
  const reports: SeriesSealReport[] = await sealed.verifySeal({ collection: users, field: "no" });
  const broken: string | undefined = reports.find((r) => !r.verified)?.failures[0]?.reason;
  void broken;
  const last: SequenceNumber | null = await invoices.current({ period: "2026" });
  await seqs.insertOne(users, { issuedAt: new Date() }, { sequence: invoices, field: "number", formatField: "ref", dateField: "issuedAt" });
  const outcome2 = await seqs.assign(users, { status: "issued" }, { sequence: invoices, field: "number", formatField: "ref", dateField: "issuedAt", sort: { issuedAt: 1 } });
  const firstAssigned: unknown = outcome2.assigned[0]?._id;
  const index = await seqs.createNumberingIndex(users, { sequence: invoices, field: "number", formatField: "ref" });
  const dates: string[] = localDates("Pacific/Auckland", [0]);
  void [dated, scopedDated, period, text, last, firstAssigned, index.name, dates, outcome2.skipped.length];
  // @ts-expect-error assign needs the field
  await seqs.assign(users, {}, { sequence: invoices });
  // @ts-expect-error unknown options are rejected at compile time too
  seqs.sequence("x", { colour: "red" });
  // @ts-expect-error insert options need a sequence
  await seqs.insertOne(users, {}, { field: "_id" });
}
