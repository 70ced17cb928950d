// The floor of a durable wake on this runtime: a route that does nothing, a round trip to an object
// that does nothing, one whose answer waits for one committed SQLite row (the output gate), and one
// that also moves the object's alarm earlier in the same transaction (a durable timer's fallback),
// and a durable wake's least (`/wake`: that commit, the answer, a POST to the host, its outcome);
// `/stats` gives the SQLite rows an object read and wrote, as exec-inbox's session stats do.
import { DurableObject } from "cloudflare:workers";

interface Env {
  FLOOR: DurableObjectNamespace<Floor>;
}

export class Floor extends DurableObject<Env> {
  /** Each `writeAndArm` moves the alarm 1 ms earlier than the last, a day ahead: it never fires. */
  private alarmAt = Date.now() + 86_400_000;
  /** The SQLite rows this object read and wrote since it started (what Cloudflare bills). */
  private readonly rows = { rows_read: 0, rows_written: 0 };

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS hits (n INTEGER PRIMARY KEY, at INTEGER)");
  }

  private insertHit(at: number): void {
    const cursor = this.ctx.storage.sql.exec("INSERT INTO hits (at) VALUES (?)", at);
    cursor.toArray();
    this.rows.rows_read += cursor.rowsRead;
    this.rows.rows_written += cursor.rowsWritten;
  }

  noop(): null {
    return null;
  }

  stats(): { rows_read: number; rows_written: number } {
    return { ...this.rows };
  }

  write(): null {
    this.insertHit(Date.now());
    return null;
  }

  writeAndArm(): null {
    this.alarmAt -= 1;
    this.ctx.storage.transactionSync(() => {
      this.insertHit(Date.now());
      void this.ctx.storage.setAlarm(this.alarmAt);
    });
    return null;
  }

  writeThenArm(): null {
    this.alarmAt -= 1;
    this.ctx.storage.transactionSync(() => {
      this.insertHit(Date.now());
    });
    void this.ctx.storage.setAlarm(this.alarmAt);
    return null;
  }

  /**
   * The least a durable wake does, in exec-inbox's order: one row and the alarm committed, the
   * answer, the POST to the host (after the commit, so that a crash cannot lose it), and its
   * outcome committed when the host answers. What exec-inbox's wake adds on top is its own.
   */
  wake(key: string, to: string): null {
    this.alarmAt -= 1;
    this.ctx.storage.transactionSync(() => {
      this.insertHit(Date.now());
      void this.ctx.storage.setAlarm(this.alarmAt);
    });
    this.ctx.waitUntil(
      fetch(to, { method: "POST", body: JSON.stringify({ session_id: key }) }).then(
        async (answer) => {
          await answer.arrayBuffer();
          this.insertHit(answer.status);
        },
      ),
    );
    return null;
  }

  override async alarm(): Promise<void> {}
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname, searchParams } = new URL(request.url);
    const stub = () => env.FLOOR.get(env.FLOOR.idFromName(searchParams.get("o") ?? "floor"));
    if (pathname === "/object") await stub().noop();
    else if (pathname === "/stats") return Response.json(await stub().stats());
    else if (pathname === "/write") await stub().write();
    else if (pathname === "/write-arm") await stub().writeAndArm();
    else if (pathname === "/write-then-arm") await stub().writeThenArm();
    else if (pathname === "/wake") {
      await stub().wake(searchParams.get("o") ?? "floor", searchParams.get("to") ?? "");
      return Response.json({ ok: true }, { status: 202 });
    }
    return Response.json({ ok: true });
  },
} satisfies ExportedHandler<Env>;
