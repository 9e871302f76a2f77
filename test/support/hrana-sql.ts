/**
 * Test support for the Hrana test server: reads an SQL text the way SQLite's tokenizer does, just
 * far enough to know how many statements it holds and which parameters it expects (`?`, `?NNN`,
 * `:name`, `@name`, `$name`, numbered as SQLite numbers them). The embedded driver silently runs
 * only the first of several statements and binds NULL for a missing argument; the Hrana spec
 * (tursodatabase/libsql docs/HRANA_3_SPEC.md, "Statements") makes both an error, so the server
 * checks them here first.
 */

export interface SqlShape {
  /** Non-empty statements separated by `;` (a CREATE TRIGGER body counts as part of its statement). */
  statements: number;
  /** The highest parameter index (SQLite's sqlite3_bind_parameter_count). */
  paramCount: number;
  /** Named parameters with their prefix (`:a`, `@a`, `$a`, `?3`) → 1-based index. */
  names: Map<string, number>;
}

const WORD = /[A-Za-z0-9_$]/;
const SPACE = /\s/;

export function analyzeSql(sql: string): SqlShape {
  const names = new Map<string, number>();
  let paramCount = 0;
  let statements = 0;
  let content = false;
  let words: string[] = [];
  let inTrigger = false;
  let i = 0;

  const endStatement = () => {
    if (content) statements++;
    content = false;
    words = [];
    inTrigger = false;
  };
  const skipTo = (close: string, from: number) => {
    const end = sql.indexOf(close, from);
    return end < 0 ? sql.length : end + close.length;
  };

  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (SPACE.test(c)) i++;
    else if (c === "-" && next === "-") i = skipTo("\n", i + 2);
    else if (c === "/" && next === "*") i = skipTo("*/", i + 2);
    else if (c === "'" || c === '"' || c === "`") {
      // A doubled quote inside is an escaped quote, so keep scanning past it.
      let j = i + 1;
      for (;;) {
        j = sql.indexOf(c, j);
        if (j < 0) {
          j = sql.length;
          break;
        }
        if (sql[j + 1] === c) j += 2;
        else {
          j++;
          break;
        }
      }
      content = true;
      i = j;
    } else if (c === "[") {
      content = true;
      i = skipTo("]", i + 1);
    } else if (c === ";") {
      i++;
      if (!inTrigger) endStatement();
    } else if (c === "?") {
      let j = i + 1;
      while (j < sql.length && /[0-9]/.test(sql[j]!)) j++;
      if (j > i + 1) {
        const index = Number(sql.slice(i + 1, j));
        names.set(sql.slice(i, j), index);
        paramCount = Math.max(paramCount, index);
      } else paramCount++;
      content = true;
      i = j;
    } else if ((c === ":" || c === "@" || c === "$") && next !== undefined && WORD.test(next)) {
      let j = i + 1;
      while (j < sql.length && WORD.test(sql[j]!)) j++;
      const name = sql.slice(i, j);
      if (!names.has(name)) names.set(name, ++paramCount);
      content = true;
      i = j;
    } else if (WORD.test(c)) {
      let j = i;
      while (j < sql.length && WORD.test(sql[j]!)) j++;
      const word = sql.slice(i, j).toLowerCase();
      words.push(word);
      if (words.length <= 3 && words[0] === "create" && word === "trigger") inTrigger = true;
      // A trigger's body ends at END followed by the statement's own `;`.
      if (inTrigger && word === "end" && /^\s*(;|$)/.test(sql.slice(j))) inTrigger = false;
      content = true;
      i = j;
    } else {
      content = true;
      i++;
    }
  }
  endStatement();
  return { statements, paramCount, names };
}
