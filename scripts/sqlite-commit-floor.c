// What SQLite itself costs the coordinator's log per lock-step dispatch, without FluxBus around it: a WAL database
// with the log's tables as of schema v8 (LogSchema.swift), and for every "dispatch" one transaction holding the rows a lock-step
// dispatch commits (its action, request and plan rows, and the previous dispatch's outcome and answer), through
// statements prepared once. Also the smallest commit there is: one row of one table.
//
//   cc -O2 -o floor scripts/sqlite-commit-floor.c -lsqlite3 && ./floor DIR COUNT [dispatch|row]
//
// Request ids are BusClient's default (one UUID and a counter), or random UUIDs with FLOOR_RANDOM_IDS=1;
// FLOOR_COUNT_FRAMES=1 turns SQLite's checkpoints off and prints the WAL frames written per commit; FLOOR_LAYOUT=v7
// keys the request table as schema v7 did, by request id with an index by sequence, for comparison.
//
// Prints CPU (user + system, getrusage) and wall time per commit for each shape (or the one named), with
// synchronous = OFF: the floor under `--sync off`, where nothing waits for the disk. One shape alone is for counting
// its instructions under callgrind.
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static void check(int code, sqlite3 *db, const char *what) {
    if (code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static double wall_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec / 1e9;
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql) {
    sqlite3_stmt *statement;
    check(sqlite3_prepare_v2(db, sql, -1, &statement, NULL), db, sql);
    return statement;
}

static void run(sqlite3 *db, sqlite3_stmt *statement) {
    check(sqlite3_step(statement), db, sqlite3_sql(statement));
    sqlite3_reset(statement);
}

// The request table as schema v8 keys it (by first sequence), or as v7 did (by request id, with an index).
static const char *request_v8 =
    "CREATE TABLE request (sequence INTEGER PRIMARY KEY, requestID TEXT NOT NULL, result BLOB, fingerprint INTEGER,"
    " actionType TEXT);";
static const char *request_v7 =
    "CREATE TABLE request (requestID TEXT PRIMARY KEY, sequence INTEGER NOT NULL, result BLOB, fingerprint INTEGER,"
    " actionType TEXT) WITHOUT ROWID; CREATE INDEX request_by_sequence ON request(sequence);";

static sqlite3 *open_log(const char *path, int v7) {
    sqlite3 *db;
    remove(path);
    check(sqlite3_open(path, &db), db, path);
    check(sqlite3_exec(db, v7 ? request_v7 : request_v8, NULL, NULL, NULL), db, "request table");
    check(sqlite3_exec(db,
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;"
        "CREATE TABLE action (sequence INTEGER PRIMARY KEY, epoch INTEGER NOT NULL, actionType TEXT NOT NULL,"
        " payload BLOB NOT NULL, error TEXT, origin TEXT NOT NULL, requestID TEXT, batchFirst INTEGER,"
        " batchSize INTEGER NOT NULL DEFAULT 0, loggedAt REAL NOT NULL, completedAt REAL, entry BLOB, chain INTEGER);"
        "CREATE TABLE outcome (sequence INTEGER PRIMARY KEY, entry BLOB NOT NULL, completedAt REAL NOT NULL);"
        "CREATE TABLE plan (request INTEGER NOT NULL, actionType TEXT NOT NULL, steps TEXT NOT NULL,"
        " PRIMARY KEY (request, actionType)) WITHOUT ROWID;"
        "CREATE TABLE single (sequence INTEGER PRIMARY KEY, payload BLOB NOT NULL);",
        NULL, NULL, NULL), db, "schema");
    return db;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "dispatch") != 0 && strcmp(argv[3], "row") != 0)) {
        fprintf(stderr, "usage: %s DIR COUNT [dispatch|row]\n", argv[0]);
        return 2;
    }
    int first = argc == 4 && strcmp(argv[3], "row") == 0 ? 1 : 0;
    int last = argc == 4 && strcmp(argv[3], "dispatch") == 0 ? 0 : 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/floor.sqlite", argv[1]);
    int count = atoi(argv[2]);
    int random_ids = getenv("FLOOR_RANDOM_IDS") != NULL, count_frames = getenv("FLOOR_COUNT_FRAMES") != NULL;
    int v7 = getenv("FLOOR_LAYOUT") != NULL && strcmp(getenv("FLOOR_LAYOUT"), "v7") == 0;
    sqlite3 *db = open_log(path, v7);
    if (count_frames) check(sqlite3_exec(db, "PRAGMA wal_autocheckpoint = 0", NULL, NULL, NULL), db, "autocheckpoint");
    sqlite3_stmt *begin = prepare(db, "BEGIN"), *commit = prepare(db, "COMMIT");
    sqlite3_stmt *action = prepare(db, "INSERT INTO action (sequence, epoch, actionType, payload, error, origin, requestID,"
        " batchFirst, batchSize, loggedAt, chain) VALUES (?, 1, 'counter.add', ?, NULL, 'bench', ?, NULL, 0, ?, ?)");
    sqlite3_stmt *request = prepare(db, "INSERT OR REPLACE INTO request (requestID, sequence, fingerprint, actionType)"
        " VALUES (?, ?, 7, 'counter.add')");
    sqlite3_stmt *plan = prepare(db, "INSERT OR REPLACE INTO plan (request, actionType, steps) VALUES (?, 'counter.add', 'counter')");
    sqlite3_stmt *outcome = prepare(db, "INSERT OR REPLACE INTO outcome (sequence, entry, completedAt) VALUES (?, ?, ?)");
    sqlite3_stmt *answer = prepare(db, v7
        ? "INSERT INTO request (requestID, sequence, result) VALUES (?, ?, ?)"
          " ON CONFLICT (requestID) DO UPDATE SET result = excluded.result"
        : "INSERT INTO request (requestID, sequence, result) VALUES (?, ?, ?)"
          " ON CONFLICT (sequence) DO UPDATE SET result = excluded.result WHERE requestID = excluded.requestID");
    sqlite3_stmt *single = prepare(db, "INSERT INTO single (sequence, payload) VALUES (?, ?)");
    unsigned char payload[64], entry[64], result[96];
    memset(payload, 'x', sizeof payload);
    memset(entry, 'e', sizeof entry);
    memset(result, 'r', sizeof result);
    char id[64], previous[64] = "";

    for (int shape = first; shape <= last; shape++) {
        double cpu = cpu_seconds(), wall = wall_seconds();
        for (int n = 1; n <= count; n++) {
            run(db, begin);
            if (shape == 0) {
                if (random_ids) {
                    // As a caller that passes its own ids sends them: a random UUID per request.
                    unsigned long long a = n * 11400714819323198485ull, b = n * 14029467366897019727ull;
                    snprintf(id, sizeof id, "%08llx-%04llx-4%03llx-a%03llx-%012llx", a >> 32, (a >> 16) & 0xffff,
                             a & 0xfff, b >> 52, b & 0xffffffffffffull);
                } else {
                    // As BusClient's default ids: one UUID per process, and a counter.
                    snprintf(id, sizeof id, "6F1A2B3C-1111-4222-8333-444455556666-%d", n);
                }
                sqlite3_bind_int64(action, 1, n);
                sqlite3_bind_blob(action, 2, payload, sizeof payload, SQLITE_TRANSIENT);
                sqlite3_bind_text(action, 3, id, -1, SQLITE_TRANSIENT);
                sqlite3_bind_double(action, 4, (double)n);
                sqlite3_bind_int64(action, 5, n * 2654435761LL);
                run(db, action);
                sqlite3_bind_text(request, 1, id, -1, SQLITE_TRANSIENT);
                sqlite3_bind_int64(request, 2, n);
                run(db, request);
                sqlite3_bind_int64(plan, 1, n);
                run(db, plan);
                if (n > 1) {
                    sqlite3_bind_int64(outcome, 1, n - 1);
                    sqlite3_bind_blob(outcome, 2, entry, sizeof entry, SQLITE_TRANSIENT);
                    sqlite3_bind_double(outcome, 3, (double)n);
                    run(db, outcome);
                    sqlite3_bind_text(answer, 1, previous, -1, SQLITE_TRANSIENT);
                    sqlite3_bind_int64(answer, 2, n - 1);
                    sqlite3_bind_blob(answer, 3, result, sizeof result, SQLITE_TRANSIENT);
                    run(db, answer);
                }
                strcpy(previous, id);
            } else {
                sqlite3_bind_int64(single, 1, n);
                sqlite3_bind_blob(single, 2, payload, sizeof payload, SQLITE_TRANSIENT);
                run(db, single);
            }
            run(db, commit);
        }
        cpu = cpu_seconds() - cpu;
        wall = wall_seconds() - wall;
        printf("%-44s CPU %6.1f µs  wall %6.1f µs per commit\n",
               shape == 0 ? "a lock-step dispatch's rows (5 in 4 tables)" : "one row of one table", cpu / count * 1e6,
               wall / count * 1e6);
    }
    if (count_frames) {
        // Without checkpoints the WAL only grows: its frames (a 24-byte header and a page each) per commit.
        char wal[4200];
        snprintf(wal, sizeof wal, "%s-wal", path);
        FILE *file = fopen(wal, "rb");
        if (file) {
            fseek(file, 0, SEEK_END);
            printf("WAL frames per commit: %.2f\n", (ftell(file) - 32) / (24.0 + 4096) / (count * (last - first + 1)));
            fclose(file);
        }
    }
    sqlite3_close_v2(db);
    return 0;
}
