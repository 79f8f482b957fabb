/// The OpenAPI 3.1 description of Ferry's HTTP API (docs/API.md), served at
/// `GET /api/v1/openapi.json`. Plain JSON text in a raw string; `Tests/openapi/validate.py` checks it
/// against the OpenAPI 3.1 schema and against docs/API.md's tables. Immutable, safe from any thread.
enum OpenAPIDocument {
    /// The document as UTF-8 JSON text.
    static let json: String = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Ferry",
    "version": "1",
    "summary": "A server-side download proxy.",
    "description": "Ferry is a server-side download proxy: it downloads URLs into its spool and serves the files. All API bodies are JSON (UTF-8, `Content-Type: application/json`). Times are RFC 3339 UTC strings. Byte counts are integers.\n\nAuthentication: when a token is configured (`--token` / `FERRY_TOKEN`), every `/api/...` and `/metrics` request must carry `Authorization: Bearer <token>`, or the session cookie set by `POST /api/v1/session`. Missing or wrong credentials: `401` with `WWW-Authenticate: Bearer`. With no token configured and a loopback `--host`, the API is open to local callers (then a request whose `Host` is not `localhost`, `127.0.0.1` or `[::1]` is refused with `403 forbidden`). `/healthz`, `/readyz`, `/` and the page's static files need no token. Cookie-authenticated requests that change state must carry `X-Requested-With: ferry` (`403 forbidden` otherwise). Requests with a body that change state must be `Content-Type: application/json` (`415` otherwise).\n\nErrors: every error body is `{\"error\": {\"code\": \"<code>\", \"message\": \"<human sentence>\"}}`. A known path with an unsupported method answers `405 method_not_allowed` with `Allow` (see `components.responses.MethodNotAllowed`). `HEAD` is accepted wherever `GET` is."
  },
  "tags": [
    {
      "name": "jobs",
      "description": "Download jobs."
    },
    {
      "name": "content",
      "description": "The downloaded files."
    },
    {
      "name": "events",
      "description": "Server-Sent Events."
    },
    {
      "name": "session",
      "description": "Cookie login for the browser page."
    },
    {
      "name": "operations",
      "description": "Health, readiness, metrics, this document and the page."
    }
  ],
  "security": [
    {
      "bearer": []
    },
    {
      "cookie": []
    }
  ],
  "paths": {
    "/api/v1/jobs": {
      "post": {
        "operationId": "createJobs",
        "summary": "Create a job, or many at once",
        "tags": [
          "jobs"
        ],
        "description": "Create a job: `201` + `Location` + job. With `dedupe` (default true), a job for the same URL (scheme and host compared case-insensitively, default port ignored) and the same headers (names case-insensitive) that is not cancelled or failed, and whose file is still present if finished, is returned instead with `200`. An `Idempotency-Key` header makes a retried POST return the first answer (keys are kept 24 hours, across restarts; the same key with a different body answers `409 conflict`). A JSON array of such objects creates many at once: `200` with an array of the same length, each item a job or an `{\"error\"}`. A URL that is a literal non-public address is refused at submit time with `403 forbidden_destination` (unless private networks are allowed).",
        "parameters": [
          {
            "$ref": "#/components/parameters/IdempotencyKey"
          },
          {
            "$ref": "#/components/parameters/XRequestedWith"
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "oneOf": [
                  {
                    "$ref": "#/components/schemas/JobCreate"
                  },
                  {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/JobCreate"
                    },
                    "description": "Many jobs at once."
                  }
                ]
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "For a single object: an existing job returned by dedupe. For an array body: an array of the same length, each item the job (created or deduplicated) or an `{\"error\"}`.",
            "content": {
              "application/json": {
                "schema": {
                  "oneOf": [
                    {
                      "$ref": "#/components/schemas/Job"
                    },
                    {
                      "type": "array",
                      "items": {
                        "$ref": "#/components/schemas/BatchItem"
                      }
                    }
                  ]
                }
              }
            }
          },
          "201": {
            "description": "Created.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Job"
                }
              }
            },
            "headers": {
              "Location": {
                "$ref": "#/components/headers/Location"
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/ForbiddenOrDestination"
          },
          "409": {
            "description": "`conflict`: the `Idempotency-Key` was used with a different body.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "413": {
            "$ref": "#/components/responses/PayloadTooLarge"
          },
          "415": {
            "$ref": "#/components/responses/UnsupportedMediaType"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          },
          "507": {
            "description": "`quota_exceeded`: the spool is at its `--spool-quota`; new downloads are refused until space is freed.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      },
      "get": {
        "operationId": "listJobs",
        "summary": "List jobs, oldest first",
        "tags": [
          "jobs"
        ],
        "parameters": [
          {
            "name": "state",
            "in": "query",
            "required": false,
            "style": "form",
            "explode": false,
            "description": "Only jobs in these states (comma list).",
            "schema": {
              "type": "array",
              "items": {
                "$ref": "#/components/schemas/JobState"
              }
            }
          },
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "Page size; default 100; above 1000 is clamped to 1000.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "default": 100
            }
          },
          {
            "name": "after",
            "in": "query",
            "required": false,
            "description": "The `next` cursor of the previous page (opaque).",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "A page of jobs.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/JobList"
                }
              }
            },
            "headers": {
              "Ferry-Event-Id": {
                "$ref": "#/components/headers/FerryEventId"
              }
            }
          },
          "400": {
            "description": "`invalid_request`: a malformed query parameter.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      },
      "delete": {
        "operationId": "purgeJobs",
        "summary": "Remove ended jobs and their files, oldest first",
        "description": "Removes jobs in the given ended states that ended before `olderThan`, with their files; a `removed` event goes out for each. `--retention` runs the same purge periodically.",
        "tags": [
          "jobs"
        ],
        "parameters": [
          {
            "name": "state",
            "in": "query",
            "required": false,
            "style": "form",
            "explode": false,
            "description": "Ended states to remove (comma list of finished, failed, cancelled); default all three.",
            "schema": {
              "type": "array",
              "items": {
                "type": "string",
                "enum": [
                  "finished",
                  "failed",
                  "cancelled"
                ]
              }
            }
          },
          {
            "name": "olderThan",
            "in": "query",
            "required": true,
            "description": "A duration (`30s`, `12h`, `7d`) or an RFC 3339 time: jobs that ended before it are removed.",
            "schema": {
              "type": "string",
              "minLength": 1
            }
          }
        ],
        "responses": {
          "200": {
            "description": "What was removed.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": [
                    "removed",
                    "ids"
                  ],
                  "properties": {
                    "removed": {
                      "type": "integer",
                      "minimum": 0
                    },
                    "ids": {
                      "type": "array",
                      "items": {
                        "type": "string"
                      }
                    }
                  }
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      }
    },
    "/api/v1/jobs/{id}": {
      "parameters": [
        {
          "$ref": "#/components/parameters/JobId"
        }
      ],
      "get": {
        "operationId": "getJob",
        "summary": "Get a job",
        "tags": [
          "jobs"
        ],
        "responses": {
          "200": {
            "description": "The job.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Job"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      },
      "patch": {
        "operationId": "updateJob",
        "summary": "Change a job's priority, rate limit or URL",
        "tags": [
          "jobs"
        ],
        "description": "Change `priority`, `maxBytesPerSecond`, or `url` (a fresh link for the same file, e.g. an expired signed URL; progress is kept when the origin's validators still match). `url`: from `waiting`, `downloading`, `paused`, `failed`; `priority`, `maxBytesPerSecond`: any state but `finished`, `cancelled`. Otherwise `409 conflict`. The job keeps its state.",
        "parameters": [
          {
            "$ref": "#/components/parameters/XRequestedWith"
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/JobPatch"
              }
            }
          }
        },
        "responses": {
          "200": {
            "description": "The changed job.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Job"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/BadRequest"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/ForbiddenOrDestination"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "413": {
            "$ref": "#/components/responses/PayloadTooLarge"
          },
          "415": {
            "$ref": "#/components/responses/UnsupportedMediaType"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      },
      "delete": {
        "operationId": "deleteJob",
        "summary": "Delete a job and its file",
        "tags": [
          "jobs"
        ],
        "description": "Stop if active, delete the job and its file. Allowed in any state.",
        "parameters": [
          {
            "$ref": "#/components/parameters/XRequestedWith"
          }
        ],
        "responses": {
          "204": {
            "description": "Gone."
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      }
    },
    "/api/v1/jobs/{id}/pause": {
      "post": {
        "operationId": "pauseJob",
        "summary": "Pause a job",
        "tags": [
          "jobs"
        ],
        "description": "Pause; the job answers with state `paused` (partial bytes kept). Idempotent on a paused job (`200` with the job). Allowed from: `waiting`, `downloading` (409 if finished or cancelled); otherwise `409 conflict`.",
        "parameters": [
          {
            "$ref": "#/components/parameters/XRequestedWith"
          }
        ],
        "responses": {
          "200": {
            "$ref": "#/components/responses/JobAction"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      },
      "parameters": [
        {
          "$ref": "#/components/parameters/JobId"
        }
      ]
    },
    "/api/v1/jobs/{id}/resume": {
      "post": {
        "operationId": "resumeJob",
        "summary": "Resume a paused or failed job",
        "tags": [
          "jobs"
        ],
        "description": "Resume a paused or failed job (to `waiting` or `downloading`), continuing from the bytes already on disk with an HTTP `Range` request validated by `If-Range` (strong ETag, else Last-Modified). If the origin's file changed, the download restarts from zero; bytes are never spliced across versions. A no-op (`200` with the job) on a waiting or downloading job. Allowed from: `paused`, `failed`; otherwise `409 conflict`.",
        "parameters": [
          {
            "$ref": "#/components/parameters/XRequestedWith"
          }
        ],
        "responses": {
          "200": {
            "$ref": "#/components/responses/JobAction"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      },
      "parameters": [
        {
          "$ref": "#/components/parameters/JobId"
        }
      ]
    },
    "/api/v1/jobs/{id}/cancel": {
      "post": {
        "operationId": "cancelJob",
        "summary": "Cancel a job for good",
        "tags": [
          "jobs"
        ],
        "description": "Stop for good and delete partial bytes; state `cancelled`. A no-op (`200` with the job) on a cancelled job. Allowed from: `waiting`, `downloading`, `paused`, `failed`; otherwise `409 conflict`.",
        "parameters": [
          {
            "$ref": "#/components/parameters/XRequestedWith"
          }
        ],
        "responses": {
          "200": {
            "$ref": "#/components/responses/JobAction"
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "$ref": "#/components/responses/Conflict"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      },
      "parameters": [
        {
          "$ref": "#/components/parameters/JobId"
        }
      ]
    },
    "/api/v1/jobs/{id}/content": {
      "parameters": [
        {
          "$ref": "#/components/parameters/JobId"
        }
      ],
      "get": {
        "operationId": "getJobContent",
        "summary": "Download a job's file",
        "tags": [
          "content"
        ],
        "description": "The finished file: `200` with `Content-Length`, `Content-Type` (the job's `contentType`), strong `ETag`, `Last-Modified`, `Accept-Ranges: bytes`, `Content-Disposition: attachment` (with an RFC 6266 `filename*=UTF-8''` form), `Repr-Digest: sha-256=:<base64>:`. Honours `Range` (single and multiple ranges: `206`; `416` with `Content-Range: bytes */N`), `If-Range`, `If-None-Match` (`304`). Not finished: `409`, unless `?follow=true`, which streams the bytes already on disk and then the rest as it arrives, ending when the job finishes (the connection is aborted if the job fails).",
        "parameters": [
          {
            "name": "follow",
            "in": "query",
            "required": false,
            "description": "`true`: for a job not yet finished, stream the bytes already on disk and then the rest as it arrives, ending when the job finishes (aborted if the job fails).",
            "schema": {
              "type": "boolean",
              "default": false
            }
          },
          {
            "name": "Range",
            "in": "header",
            "required": false,
            "description": "Byte ranges (RFC 9110), single or multiple.",
            "schema": {
              "type": "string"
            },
            "example": "bytes=0-1023"
          },
          {
            "name": "If-Range",
            "in": "header",
            "required": false,
            "description": "An ETag or HTTP date; when it does not match, the whole file is sent with `200`.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "description": "Entity tags; a match answers `304`.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The whole file (or, with `follow=true`, the growing file, streamed).",
            "headers": {
              "Content-Length": {
                "$ref": "#/components/headers/ContentLength"
              },
              "ETag": {
                "$ref": "#/components/headers/ETag"
              },
              "Last-Modified": {
                "$ref": "#/components/headers/LastModified"
              },
              "Accept-Ranges": {
                "$ref": "#/components/headers/AcceptRanges"
              },
              "Content-Disposition": {
                "$ref": "#/components/headers/ContentDisposition"
              },
              "Repr-Digest": {
                "$ref": "#/components/headers/ReprDigest"
              }
            },
            "content": {
              "*/*": {
                "schema": {
                  "type": "string",
                  "contentMediaType": "application/octet-stream"
                }
              }
            }
          },
          "206": {
            "description": "The requested range: a single range as the raw bytes with `Content-Range`; multiple ranges as `multipart/byteranges`.",
            "headers": {
              "Content-Length": {
                "$ref": "#/components/headers/ContentLength"
              },
              "ETag": {
                "$ref": "#/components/headers/ETag"
              },
              "Last-Modified": {
                "$ref": "#/components/headers/LastModified"
              },
              "Accept-Ranges": {
                "$ref": "#/components/headers/AcceptRanges"
              },
              "Content-Disposition": {
                "$ref": "#/components/headers/ContentDisposition"
              },
              "Repr-Digest": {
                "$ref": "#/components/headers/ReprDigest"
              },
              "Content-Range": {
                "$ref": "#/components/headers/ContentRange"
              }
            },
            "content": {
              "multipart/byteranges": {
                "schema": {
                  "type": "string"
                }
              },
              "*/*": {
                "schema": {
                  "type": "string",
                  "contentMediaType": "application/octet-stream"
                }
              }
            }
          },
          "304": {
            "description": "Not modified: `If-None-Match` matched the file's ETag.",
            "headers": {
              "ETag": {
                "$ref": "#/components/headers/ETag"
              },
              "Last-Modified": {
                "$ref": "#/components/headers/LastModified"
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "409": {
            "description": "`conflict`: the job is not finished and `follow` is not `true`.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "416": {
            "description": "Range not satisfiable.",
            "headers": {
              "Content-Range": {
                "$ref": "#/components/headers/ContentRangeUnsatisfied"
              }
            }
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      },
      "head": {
        "operationId": "headJobContent",
        "summary": "Headers of a job's file, without the body",
        "tags": [
          "content"
        ],
        "description": "The finished file: `200` with `Content-Length`, `Content-Type` (the job's `contentType`), strong `ETag`, `Last-Modified`, `Accept-Ranges: bytes`, `Content-Disposition: attachment` (with an RFC 6266 `filename*=UTF-8''` form), `Repr-Digest: sha-256=:<base64>:`. Honours `Range` (single and multiple ranges: `206`; `416` with `Content-Range: bytes */N`), `If-Range`, `If-None-Match` (`304`). Not finished: `409`, unless `?follow=true`, which streams the bytes already on disk and then the rest as it arrives, ending when the job finishes (the connection is aborted if the job fails). `HEAD` answers as `GET` would, without a body.",
        "parameters": [
          {
            "name": "follow",
            "in": "query",
            "required": false,
            "description": "`true`: for a job not yet finished, stream the bytes already on disk and then the rest as it arrives, ending when the job finishes (aborted if the job fails).",
            "schema": {
              "type": "boolean",
              "default": false
            }
          },
          {
            "name": "Range",
            "in": "header",
            "required": false,
            "description": "Byte ranges (RFC 9110), single or multiple.",
            "schema": {
              "type": "string"
            },
            "example": "bytes=0-1023"
          },
          {
            "name": "If-Range",
            "in": "header",
            "required": false,
            "description": "An ETag or HTTP date; when it does not match, the whole file is sent with `200`.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "description": "Entity tags; a match answers `304`.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The whole file (or, with `follow=true`, the growing file, streamed).",
            "headers": {
              "Content-Length": {
                "$ref": "#/components/headers/ContentLength"
              },
              "ETag": {
                "$ref": "#/components/headers/ETag"
              },
              "Last-Modified": {
                "$ref": "#/components/headers/LastModified"
              },
              "Accept-Ranges": {
                "$ref": "#/components/headers/AcceptRanges"
              },
              "Content-Disposition": {
                "$ref": "#/components/headers/ContentDisposition"
              },
              "Repr-Digest": {
                "$ref": "#/components/headers/ReprDigest"
              }
            }
          },
          "206": {
            "description": "The requested range: a single range as the raw bytes with `Content-Range`; multiple ranges as `multipart/byteranges`.",
            "headers": {
              "Content-Length": {
                "$ref": "#/components/headers/ContentLength"
              },
              "ETag": {
                "$ref": "#/components/headers/ETag"
              },
              "Last-Modified": {
                "$ref": "#/components/headers/LastModified"
              },
              "Accept-Ranges": {
                "$ref": "#/components/headers/AcceptRanges"
              },
              "Content-Disposition": {
                "$ref": "#/components/headers/ContentDisposition"
              },
              "Repr-Digest": {
                "$ref": "#/components/headers/ReprDigest"
              },
              "Content-Range": {
                "$ref": "#/components/headers/ContentRange"
              }
            }
          },
          "304": {
            "description": "Not modified: `If-None-Match` matched the file's ETag.",
            "headers": {
              "ETag": {
                "$ref": "#/components/headers/ETag"
              },
              "Last-Modified": {
                "$ref": "#/components/headers/LastModified"
              }
            }
          },
          "401": {
            "description": "`unauthorized`: missing or wrong credentials. (no body for HEAD)",
            "headers": {
              "WWW-Authenticate": {
                "$ref": "#/components/headers/WWWAuthenticate"
              }
            }
          },
          "403": {
            "description": "`forbidden`: a cookie-authenticated state-changing request without `X-Requested-With: ferry`, or a foreign `Host` in open mode. (no body for HEAD)"
          },
          "404": {
            "description": "`not_found`: no such job. (no body for HEAD)"
          },
          "409": {
            "description": "`conflict`: the job is not finished and `follow` is not `true`. (no body for HEAD)"
          },
          "416": {
            "description": "Range not satisfiable.",
            "headers": {
              "Content-Range": {
                "$ref": "#/components/headers/ContentRangeUnsatisfied"
              }
            }
          },
          "429": {
            "description": "`rate_limited`: too many requests. (no body for HEAD)"
          },
          "503": {
            "description": "`unavailable`: the service cannot answer now. (no body for HEAD)"
          }
        }
      }
    },
    "/api/v1/events": {
      "get": {
        "operationId": "streamEvents",
        "summary": "Server-Sent Events for all jobs",
        "tags": [
          "events"
        ],
        "description": "Server-Sent Events. Each event has `id:` (a single increasing integer across the whole server, still increasing after a restart), `event:` and one-line JSON `data:`. The stream starts with `retry: 2000`; a comment line (`: ping`) goes out every 15 seconds. Events: `job` (data: JobEvent), `progress` (data: ProgressEvent; may be coalesced), `removed` (data: RemovedEvent), `reset` (data: ResetEvent). Every `job` and `removed` event reaches the subscriber in increasing id order, and a job's final numbers always arrive in its terminal `job` event. A slow subscriber never slows downloads or other subscribers: its pending progress events are coalesced; if it still falls too far behind, the server closes its stream and it resumes with `Last-Event-ID`.",
        "parameters": [
          {
            "name": "jobs",
            "in": "query",
            "required": false,
            "style": "form",
            "explode": false,
            "description": "Only events of these jobs (comma list of ids).",
            "schema": {
              "type": "array",
              "items": {
                "type": "string"
              }
            }
          },
          {
            "$ref": "#/components/parameters/EventInterval"
          },
          {
            "$ref": "#/components/parameters/LastEventId"
          }
        ],
        "responses": {
          "200": {
            "description": "The event stream (`Cache-Control: no-cache`).",
            "content": {
              "text/event-stream": {
                "schema": {
                  "$ref": "#/components/schemas/ServerSentEvent"
                },
                "example": "retry: 2000\n\nid: 42\nevent: progress\ndata: {\"id\":\"01JD3Q7N5Z8K2W\",\"bytesReceived\":1048576,\"bytesExpected\":4194304,\"progress\":0.25,\"speed\":2097152,\"eta\":1.5}\n\n",
                "x-ferry-events": {
                  "job": {
                    "$ref": "#/components/schemas/JobEvent"
                  },
                  "progress": {
                    "$ref": "#/components/schemas/ProgressEvent"
                  },
                  "removed": {
                    "$ref": "#/components/schemas/RemovedEvent"
                  },
                  "reset": {
                    "$ref": "#/components/schemas/ResetEvent"
                  }
                }
              }
            }
          },
          "400": {
            "description": "`invalid_request`: a malformed query parameter.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      }
    },
    "/api/v1/jobs/{id}/events": {
      "parameters": [
        {
          "$ref": "#/components/parameters/JobId"
        }
      ],
      "get": {
        "operationId": "streamJobEvents",
        "summary": "Server-Sent Events for one job",
        "tags": [
          "events"
        ],
        "description": "The same as `GET /api/v1/events`, for one job; starts with the job's current `job` event; closes after the job reaches `finished` or `cancelled`. For a job already in one of those states: with `Last-Event-ID`, `204` (which tells `EventSource` to stop); without, its `job` event and then close. Unknown job: `404`. Server-Sent Events. Each event has `id:` (a single increasing integer across the whole server, still increasing after a restart), `event:` and one-line JSON `data:`. The stream starts with `retry: 2000`; a comment line (`: ping`) goes out every 15 seconds. Events: `job` (data: JobEvent), `progress` (data: ProgressEvent; may be coalesced), `removed` (data: RemovedEvent), `reset` (data: ResetEvent). Every `job` and `removed` event reaches the subscriber in increasing id order, and a job's final numbers always arrive in its terminal `job` event. A slow subscriber never slows downloads or other subscribers: its pending progress events are coalesced; if it still falls too far behind, the server closes its stream and it resumes with `Last-Event-ID`.",
        "parameters": [
          {
            "$ref": "#/components/parameters/EventInterval"
          },
          {
            "$ref": "#/components/parameters/LastEventId"
          }
        ],
        "responses": {
          "200": {
            "description": "The event stream (`Cache-Control: no-cache`).",
            "content": {
              "text/event-stream": {
                "schema": {
                  "$ref": "#/components/schemas/ServerSentEvent"
                },
                "example": "retry: 2000\n\nid: 42\nevent: progress\ndata: {\"id\":\"01JD3Q7N5Z8K2W\",\"bytesReceived\":1048576,\"bytesExpected\":4194304,\"progress\":0.25,\"speed\":2097152,\"eta\":1.5}\n\n",
                "x-ferry-events": {
                  "job": {
                    "$ref": "#/components/schemas/JobEvent"
                  },
                  "progress": {
                    "$ref": "#/components/schemas/ProgressEvent"
                  },
                  "removed": {
                    "$ref": "#/components/schemas/RemovedEvent"
                  },
                  "reset": {
                    "$ref": "#/components/schemas/ResetEvent"
                  }
                }
              }
            }
          },
          "204": {
            "description": "The job is already `finished` or `cancelled` and `Last-Event-ID` was sent: nothing more will come (tells `EventSource` to stop)."
          },
          "400": {
            "description": "`invalid_request`: a malformed query parameter.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "404": {
            "$ref": "#/components/responses/NotFound"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      }
    },
    "/api/v1/session": {
      "post": {
        "operationId": "createSession",
        "summary": "Log the browser page in",
        "tags": [
          "session"
        ],
        "description": "Body `{\"token\"}`: sets an `HttpOnly; SameSite=Strict` session cookie (`ferry_session`) for the page, which `EventSource` then sends (it cannot send headers). A wrong token answers `401`.",
        "security": [],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "$ref": "#/components/schemas/SessionCreate"
              }
            }
          }
        },
        "responses": {
          "204": {
            "description": "Logged in; the cookie is set.",
            "headers": {
              "Set-Cookie": {
                "$ref": "#/components/headers/SetCookieSession"
              }
            }
          },
          "400": {
            "description": "`invalid_request`: malformed JSON or no `token`.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "413": {
            "$ref": "#/components/responses/PayloadTooLarge"
          },
          "415": {
            "$ref": "#/components/responses/UnsupportedMediaType"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      },
      "delete": {
        "operationId": "deleteSession",
        "summary": "Log out",
        "tags": [
          "session"
        ],
        "description": "Clears the session cookie.",
        "parameters": [
          {
            "$ref": "#/components/parameters/XRequestedWith"
          }
        ],
        "responses": {
          "204": {
            "description": "Logged out; the cookie is cleared.",
            "headers": {
              "Set-Cookie": {
                "$ref": "#/components/headers/SetCookieCleared"
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      }
    },
    "/healthz": {
      "get": {
        "operationId": "healthz",
        "summary": "Liveness",
        "tags": [
          "operations"
        ],
        "security": [],
        "description": "`200 {\"status\":\"ok\"}` while the process serves. Needs no token.",
        "responses": {
          "200": {
            "description": "The process serves.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Health"
                }
              }
            }
          }
        }
      }
    },
    "/readyz": {
      "get": {
        "operationId": "readyz",
        "summary": "Readiness",
        "tags": [
          "operations"
        ],
        "security": [],
        "description": "`200` when the store is open, the spool writable and free space above the reserve; else `503` with the reasons. Needs no token.",
        "responses": {
          "200": {
            "description": "Ready.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Readiness"
                }
              }
            }
          },
          "503": {
            "description": "Not ready; `reasons` says why.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Readiness"
                }
              }
            }
          }
        }
      }
    },
    "/metrics": {
      "get": {
        "operationId": "metrics",
        "summary": "Prometheus metrics",
        "tags": [
          "operations"
        ],
        "description": "Prometheus text format: jobs by state, bytes downloaded, current download speed, HTTP requests by route and status, SSE subscribers, spool bytes and free bytes, transfer errors by code.",
        "responses": {
          "200": {
            "description": "The metrics.",
            "content": {
              "text/plain; version=0.0.4": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          }
        }
      }
    },
    "/api/v1/openapi.json": {
      "get": {
        "operationId": "openapi",
        "summary": "This OpenAPI 3.1 description",
        "tags": [
          "operations"
        ],
        "responses": {
          "200": {
            "description": "The OpenAPI 3.1 document.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Unauthorized"
          },
          "403": {
            "$ref": "#/components/responses/Forbidden"
          },
          "429": {
            "$ref": "#/components/responses/RateLimited"
          },
          "503": {
            "$ref": "#/components/responses/Unavailable"
          }
        }
      }
    },
    "/": {
      "get": {
        "operationId": "page",
        "summary": "The browser page",
        "tags": [
          "operations"
        ],
        "security": [],
        "description": "The browser page from `Public/`. It and the page's static files need no token.",
        "responses": {
          "200": {
            "description": "The page.",
            "content": {
              "text/html": {
                "schema": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    }
  },
  "components": {
    "schemas": {
      "ServerSentEvent": {
        "type": "object",
        "description": "One Server-Sent Event; the stream is a sequence of them (plus `: ping` comments).",
        "required": [
          "data"
        ],
        "properties": {
          "event": {
            "type": "string",
            "enum": [
              "job",
              "progress",
              "removed",
              "reset"
            ]
          },
          "id": {
            "type": "string",
            "pattern": "^[0-9]+$"
          },
          "data": {
            "type": "string",
            "contentMediaType": "application/json"
          },
          "retry": {
            "type": "integer"
          }
        }
      },
      "ErrorCode": {
        "type": "string",
        "enum": [
          "invalid_request",
          "invalid_url",
          "unsupported_scheme",
          "forbidden_destination",
          "unauthorized",
          "forbidden",
          "not_found",
          "method_not_allowed",
          "conflict",
          "payload_too_large",
          "unsupported_media_type",
          "rate_limited",
          "unavailable",
          "http_error",
          "network_error",
          "timeout",
          "too_many_redirects",
          "checksum_mismatch",
          "file_too_large",
          "quota_exceeded",
          "internal",
          "disk_full",
          "retrying"
        ],
        "description": "Stable error code. API errors: `invalid_request` (400, malformed JSON or fields; unknown fields are ignored), `invalid_url` (400), `unsupported_scheme` (400: only http and https), `forbidden_destination` (403 at submit time, or a job failure: the URL or a redirect resolves to a loopback, private, link-local or otherwise non-public address and private networks are not allowed), `unauthorized` (401), `forbidden` (403: CSRF header missing, or a foreign `Host` in open mode), `not_found` (404), `method_not_allowed` (405, with `Allow`), `conflict` (409: the action does not apply in the job's state), `payload_too_large` (413: API request bodies over 1 MiB), `unsupported_media_type` (415), `rate_limited` (429), `unavailable` (503). Job failures: `http_error` (origin answered 4xx/5xx; the error carries `httpStatus`), `network_error`, `timeout`, `too_many_redirects`, `checksum_mismatch`, `file_too_large`, `quota_exceeded`, `internal`. Reasons a job is `waiting`: `disk_full` (free space fell below the reserve or a write hit ENOSPC: the job keeps its bytes and continues by itself when space returns), `retrying` (waiting out a back-off after a retryable failure; the message says when)."
      },
      "ErrorDetail": {
        "type": "object",
        "description": "What went wrong: the same shape in API error bodies and inside a job (`error`).",
        "required": [
          "code",
          "message"
        ],
        "properties": {
          "code": {
            "$ref": "#/components/schemas/ErrorCode"
          },
          "message": {
            "type": "string",
            "description": "A human sentence."
          },
          "httpStatus": {
            "type": "integer",
            "minimum": 100,
            "maximum": 599,
            "description": "The origin's HTTP status; present with code `http_error`."
          }
        },
        "if": {
          "properties": {
            "code": {
              "const": "http_error"
            }
          },
          "required": [
            "code"
          ]
        },
        "then": {
          "required": [
            "httpStatus"
          ]
        }
      },
      "Error": {
        "type": "object",
        "description": "Every error body: `{\"error\": {\"code\": \"<code>\", \"message\": \"<human sentence>\"}}`.",
        "required": [
          "error"
        ],
        "properties": {
          "error": {
            "$ref": "#/components/schemas/ErrorDetail"
          }
        },
        "example": {
          "error": {
            "code": "not_found",
            "message": "No job with id 'abc'."
          }
        }
      },
      "JobState": {
        "type": "string",
        "enum": [
          "waiting",
          "downloading",
          "paused",
          "finished",
          "failed",
          "cancelled"
        ],
        "description": "`waiting` (queued behind the concurrency limit, or waiting out a retry back-off), `downloading`, `paused` (by a user; partial bytes kept), `finished` (file complete, verified, moved into place), `failed` (gave up; partial bytes kept where a resume could use them), `cancelled` (stopped for good; partial bytes deleted). Terminal: `finished`, `cancelled`; `failed` can be resumed."
      },
      "Job": {
        "type": "object",
        "description": "A download job. Every field listed here is always present; fields that do not apply are `null`. Times are RFC 3339 UTC strings; byte counts are integers.",
        "required": [
          "id",
          "url",
          "finalUrl",
          "state",
          "filename",
          "bytesReceived",
          "bytesExpected",
          "progress",
          "speed",
          "eta",
          "contentType",
          "sha256",
          "expectedSha256",
          "error",
          "attempts",
          "priority",
          "maxBytesPerSecond",
          "connections",
          "createdAt",
          "startedAt",
          "finishedAt",
          "contentUrl"
        ],
        "properties": {
          "id": {
            "type": "string",
            "description": "Opaque job id."
          },
          "url": {
            "type": "string",
            "description": "The URL as submitted (or as last changed by PATCH)."
          },
          "finalUrl": {
            "type": [
              "string",
              "null"
            ],
            "description": "The URL after redirects; `null` until the origin has answered."
          },
          "state": {
            "$ref": "#/components/schemas/JobState"
          },
          "filename": {
            "type": [
              "string",
              "null"
            ],
            "description": "The name the file has (or will have) on disk, after collision renaming (`name (1).ext`). The URL-derived name comes from the final URL after redirects. `null` while not yet known."
          },
          "bytesReceived": {
            "type": "integer",
            "format": "int64",
            "minimum": 0
          },
          "bytesExpected": {
            "type": [
              "integer",
              "null"
            ],
            "format": "int64",
            "minimum": 0,
            "description": "`null` when the origin gives no length."
          },
          "progress": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0,
            "maximum": 1,
            "description": "Fraction done, 0 to 1; `null` when the origin gives no length."
          },
          "speed": {
            "type": "number",
            "minimum": 0,
            "description": "Bytes per second, smoothed."
          },
          "eta": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0,
            "description": "Seconds left; `null` when the origin gives no length."
          },
          "contentType": {
            "type": [
              "string",
              "null"
            ],
            "description": "The origin's Content-Type, once known."
          },
          "sha256": {
            "type": [
              "string",
              "null"
            ],
            "pattern": "^[0-9a-fA-F]{64}$",
            "description": "Hex SHA-256 of the file, once finished; otherwise `null`."
          },
          "expectedSha256": {
            "type": [
              "string",
              "null"
            ],
            "pattern": "^[0-9a-fA-F]{64}$",
            "description": "The expected digest given at creation (hex), or `null`."
          },
          "error": {
            "oneOf": [
              {
                "$ref": "#/components/schemas/ErrorDetail"
              },
              {
                "type": "null"
              }
            ],
            "description": "`{\"code\", \"message\", \"httpStatus\"?}` when `failed`, and gives the reason while a job is `waiting` for disk space (`disk_full`) or a retry (`retrying`); otherwise `null`."
          },
          "attempts": {
            "type": "integer",
            "minimum": 0,
            "description": "Transfer attempts made so far."
          },
          "priority": {
            "type": "integer",
            "description": "Higher starts first."
          },
          "maxBytesPerSecond": {
            "type": [
              "integer",
              "null"
            ],
            "description": "The job's own speed limit in bytes per second (held over every 2-second window), `null` for none."
          },
          "connections": {
            "type": [
              "integer",
              "null"
            ],
            "description": "Parallel ranges asked for (1-16); `null` lets Ferry choose (4 for files of 8 MiB and more)."
          },
          "createdAt": {
            "type": "string",
            "format": "date-time"
          },
          "startedAt": {
            "type": [
              "string",
              "null"
            ],
            "format": "date-time",
            "description": "`null` until the job first starts downloading."
          },
          "finishedAt": {
            "type": [
              "string",
              "null"
            ],
            "format": "date-time",
            "description": "`null` until the job ends."
          },
          "contentUrl": {
            "type": "string",
            "format": "uri-reference",
            "description": "Where the file is served: `/api/v1/jobs/{id}/content`."
          }
        },
        "example": {
          "id": "01JD3Q7N5Z8K2W",
          "url": "https://origin.example/file.zip",
          "finalUrl": "https://cdn.example/after/redirects.zip",
          "state": "downloading",
          "filename": "file.zip",
          "bytesReceived": 1048576,
          "bytesExpected": 4194304,
          "progress": 0.25,
          "speed": 2097152,
          "eta": 1.5,
          "contentType": "application/zip",
          "sha256": null,
          "expectedSha256": null,
          "error": null,
          "attempts": 1,
          "priority": 0,
          "maxBytesPerSecond": null,
          "connections": null,
          "createdAt": "2026-11-22T04:05:06.123Z",
          "startedAt": "2026-11-22T04:05:06.200Z",
          "finishedAt": null,
          "contentUrl": "/api/v1/jobs/01JD3Q7N5Z8K2W/content"
        }
      },
      "JobCreate": {
        "type": "object",
        "description": "A job to create. Unknown fields are ignored.",
        "required": [
          "url"
        ],
        "additionalProperties": true,
        "properties": {
          "url": {
            "type": "string",
            "minLength": 1,
            "description": "The http or https URL to download."
          },
          "filename": {
            "type": [
              "string",
              "null"
            ],
            "description": "The name to save under (sanitized; renamed on collision)."
          },
          "headers": {
            "type": "object",
            "additionalProperties": {
              "type": "string"
            },
            "description": "Request headers for the origin (name to value). `Host`, `Range` and hop-by-hop headers are refused (400 `invalid_request`)."
          },
          "sha256": {
            "type": [
              "string",
              "null"
            ],
            "pattern": "^[0-9a-fA-F]{64}$",
            "description": "Expected SHA-256 digest, hex; a mismatch fails the job with `checksum_mismatch`."
          },
          "priority": {
            "type": "integer",
            "default": 0,
            "description": "Higher starts first."
          },
          "maxBytesPerSecond": {
            "type": [
              "integer",
              "null"
            ],
            "format": "int64",
            "minimum": 1,
            "description": "Rate limit for this job in bytes per second; absent or `null`: no limit."
          },
          "connections": {
            "type": "integer",
            "minimum": 1,
            "maximum": 16,
            "description": "Parallel ranges for one file (1-16)."
          },
          "paused": {
            "type": "boolean",
            "default": false,
            "description": "`true`: create without starting."
          },
          "dedupe": {
            "type": "boolean",
            "default": true,
            "description": "Return an existing job for the same URL (scheme and host compared case-insensitively, default port ignored) and the same headers (names case-insensitive) that is not cancelled or failed, and whose file is still present if finished, instead of creating one (answer `200`)."
          }
        },
        "example": {
          "url": "https://origin.example/file.zip",
          "sha256": null,
          "priority": 5
        }
      },
      "JobPatch": {
        "type": "object",
        "description": "Changes to a job. `url` (a fresh link for the same file, e.g. an expired signed URL; progress is kept when the origin's validators still match) applies in `waiting`, `downloading`, `paused`, `failed`; `priority` and `maxBytesPerSecond` in any state but `finished` and `cancelled`. Otherwise `409 conflict`. Unknown fields are ignored.",
        "additionalProperties": true,
        "properties": {
          "url": {
            "type": "string",
            "minLength": 1,
            "description": "A new http or https URL for the same file."
          },
          "priority": {
            "type": "integer",
            "description": "Higher starts first."
          },
          "maxBytesPerSecond": {
            "type": [
              "integer",
              "null"
            ],
            "format": "int64",
            "minimum": 1,
            "description": "Rate limit in bytes per second; `null` removes the limit."
          }
        }
      },
      "BatchItem": {
        "description": "One answer of a batch create: the job (created or deduplicated), or why that item failed.",
        "oneOf": [
          {
            "$ref": "#/components/schemas/Job"
          },
          {
            "allOf": [
              {
                "$ref": "#/components/schemas/Error"
              }
            ],
            "not": {
              "required": [
                "id"
              ]
            },
            "description": "This item was not created; the body an API error would have."
          }
        ]
      },
      "JobList": {
        "type": "object",
        "required": [
          "jobs",
          "next"
        ],
        "properties": {
          "jobs": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/Job"
            },
            "description": "Oldest first."
          },
          "next": {
            "type": [
              "string",
              "null"
            ],
            "description": "Opaque cursor for the next page (pass as `after`), or `null` on the last page."
          }
        }
      },
      "JobEvent": {
        "description": "Data of `event: job`: a whole job object, sent on creation, on every state change, on PATCH, and when a transfer is restarted from zero (`\"restarted\": true` alongside the job) or resumed at an offset.",
        "allOf": [
          {
            "$ref": "#/components/schemas/Job"
          },
          {
            "type": "object",
            "properties": {
              "restarted": {
                "type": "boolean",
                "const": true,
                "description": "Present (true) when the transfer was restarted from zero."
              },
              "restartReason": {
                "type": "string",
                "description": "With `restarted`: why the bytes on disk were discarded (e.g. the origin ignored the range request, or the file changed)."
              }
            }
          }
        ]
      },
      "ProgressEvent": {
        "type": "object",
        "description": "Data of `event: progress`: at most one per job per `interval`, the latest values only.",
        "required": [
          "id",
          "bytesReceived",
          "bytesExpected",
          "progress",
          "speed",
          "eta"
        ],
        "properties": {
          "id": {
            "type": "string",
            "description": "The job id."
          },
          "bytesReceived": {
            "type": "integer",
            "format": "int64",
            "minimum": 0
          },
          "bytesExpected": {
            "type": [
              "integer",
              "null"
            ],
            "format": "int64",
            "minimum": 0
          },
          "progress": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0,
            "maximum": 1
          },
          "speed": {
            "type": "number",
            "minimum": 0,
            "description": "Bytes per second, smoothed."
          },
          "eta": {
            "type": [
              "number",
              "null"
            ],
            "minimum": 0,
            "description": "Seconds left."
          }
        }
      },
      "RemovedEvent": {
        "type": "object",
        "description": "Data of `event: removed`, sent after `DELETE`.",
        "required": [
          "id"
        ],
        "properties": {
          "id": {
            "type": "string",
            "description": "The id of the deleted job."
          }
        }
      },
      "ResetEvent": {
        "type": "object",
        "description": "Data of `event: reset`: sent instead of a replay when the client's `Last-Event-ID` is older than the server keeps, or is not an id the server has issued; the client must re-list. The payload carries no required fields."
      },
      "SessionCreate": {
        "type": "object",
        "required": [
          "token"
        ],
        "properties": {
          "token": {
            "type": "string",
            "description": "The API token."
          }
        }
      },
      "Health": {
        "type": "object",
        "required": [
          "status"
        ],
        "properties": {
          "status": {
            "type": "string",
            "const": "ok"
          }
        }
      },
      "Readiness": {
        "type": "object",
        "description": "Readiness: ready when the store is open, the spool writable and free space above the reserve. `reasons` lists what is wrong when not ready.",
        "required": [
          "status"
        ],
        "properties": {
          "status": {
            "type": "string",
            "enum": [
              "ok",
              "unavailable"
            ]
          },
          "reasons": {
            "type": "array",
            "items": {
              "type": "string"
            },
            "description": "Human sentences, one per failed condition; empty or absent when ready."
          }
        }
      }
    },
    "responses": {
      "BadRequest": {
        "description": "`invalid_request` (malformed JSON or fields; unknown fields are ignored), `invalid_url`, or `unsupported_scheme` (only http and https).",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "Unauthorized": {
        "description": "`unauthorized`: missing or wrong credentials.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        },
        "headers": {
          "WWW-Authenticate": {
            "$ref": "#/components/headers/WWWAuthenticate"
          }
        }
      },
      "Forbidden": {
        "description": "`forbidden`: a cookie-authenticated state-changing request without `X-Requested-With: ferry`, or a foreign `Host` in open mode.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "ForbiddenOrDestination": {
        "description": "`forbidden_destination`: the URL is a literal loopback, private, link-local or otherwise non-public address and private networks are not allowed; or `forbidden` (CSRF header missing, foreign `Host` in open mode).",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "NotFound": {
        "description": "`not_found`: no such job.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "MethodNotAllowed": {
        "description": "`method_not_allowed`: the path exists but not with this method.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        },
        "headers": {
          "Allow": {
            "$ref": "#/components/headers/Allow"
          }
        }
      },
      "Conflict": {
        "description": "`conflict`: the action does not apply in the job's state.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "PayloadTooLarge": {
        "description": "`payload_too_large`: API request bodies over 1 MiB.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "UnsupportedMediaType": {
        "description": "`unsupported_media_type`: a state-changing request with a body must be `Content-Type: application/json` (parameters such as `charset` allowed).",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "RateLimited": {
        "description": "`rate_limited`: too many requests.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "Unavailable": {
        "description": "`unavailable`: the service cannot answer now.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "JobAction": {
        "description": "The job after the action (also for the no-op cases).",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Job"
            }
          }
        }
      }
    },
    "parameters": {
      "JobId": {
        "name": "id",
        "in": "path",
        "required": true,
        "description": "The job id.",
        "schema": {
          "type": "string"
        }
      },
      "XRequestedWith": {
        "name": "X-Requested-With",
        "in": "header",
        "required": false,
        "description": "CSRF guard: required (value `ferry`) on state-changing requests authenticated by the session cookie (`403 forbidden` otherwise); bearer-authenticated requests need not send it.",
        "schema": {
          "type": "string",
          "const": "ferry"
        }
      },
      "IdempotencyKey": {
        "name": "Idempotency-Key",
        "in": "header",
        "required": false,
        "description": "Makes a retried POST return the first answer. Keys are kept 24 hours, across restarts; the same key with a different body answers `409 conflict`.",
        "schema": {
          "type": "string",
          "minLength": 1
        }
      },
      "LastEventId": {
        "name": "Last-Event-ID",
        "in": "header",
        "required": false,
        "description": "Resume after this event id: every `job`/`removed` event after it that the client missed is replayed, with the latest progress of each job; none lost, none duplicated. An id older than the server keeps, or one it never issued, gets `event: reset` instead.",
        "schema": {
          "type": "string"
        }
      },
      "EventInterval": {
        "name": "interval",
        "in": "query",
        "required": false,
        "description": "Minimum milliseconds between progress events per job; default 500, floor 100 (lower values are raised to 100).",
        "schema": {
          "type": "integer",
          "default": 500
        }
      }
    },
    "headers": {
      "Location": {
        "description": "The new job's URL, `/api/v1/jobs/{id}`.",
        "required": true,
        "schema": {
          "type": "string",
          "format": "uri-reference"
        }
      },
      "FerryEventId": {
        "description": "The id of the last event already reflected in this list. `GET /api/v1/jobs` then `GET /api/v1/events` with `Last-Event-ID` set to this value gives a gapless view.",
        "required": true,
        "schema": {
          "type": "string",
          "pattern": "^[0-9]+$"
        }
      },
      "WWWAuthenticate": {
        "description": "`Bearer`.",
        "required": true,
        "schema": {
          "type": "string"
        },
        "example": "Bearer"
      },
      "Allow": {
        "description": "The methods the path supports.",
        "required": true,
        "schema": {
          "type": "string"
        },
        "example": "GET, HEAD, PATCH, DELETE"
      },
      "ContentLength": {
        "description": "Length of the body (absent when streaming with `follow=true`).",
        "schema": {
          "type": "integer",
          "format": "int64",
          "minimum": 0
        }
      },
      "ETag": {
        "description": "Strong entity tag of the finished file.",
        "schema": {
          "type": "string"
        },
        "example": "\"s7-4194304\""
      },
      "LastModified": {
        "description": "IMF-fixdate.",
        "schema": {
          "type": "string"
        },
        "example": "Sun, 22 Nov 2026 04:05:06 GMT"
      },
      "AcceptRanges": {
        "description": "`bytes`.",
        "schema": {
          "type": "string",
          "const": "bytes"
        }
      },
      "ContentDisposition": {
        "description": "`attachment` with an RFC 6266 `filename*=UTF-8''` form.",
        "schema": {
          "type": "string"
        },
        "example": "attachment; filename=\"file.zip\"; filename*=UTF-8''file.zip"
      },
      "ReprDigest": {
        "description": "`sha-256=:<base64>:` (RFC 9530).",
        "schema": {
          "type": "string",
          "pattern": "^sha-256=:[A-Za-z0-9+/]{43}=:$"
        }
      },
      "ContentRange": {
        "description": "For a single range: `bytes first-last/total`. Absent for multiple ranges (each part of the `multipart/byteranges` body carries its own).",
        "schema": {
          "type": "string"
        },
        "example": "bytes 0-1023/4194304"
      },
      "ContentRangeUnsatisfied": {
        "description": "`bytes */N`, N being the file's length.",
        "required": true,
        "schema": {
          "type": "string",
          "pattern": "^bytes \\*/[0-9]+$"
        }
      },
      "SetCookieSession": {
        "description": "The session cookie `ferry_session`, `HttpOnly; SameSite=Strict`.",
        "required": true,
        "schema": {
          "type": "string"
        }
      },
      "SetCookieCleared": {
        "description": "Clears the `ferry_session` cookie.",
        "required": true,
        "schema": {
          "type": "string"
        }
      }
    },
    "securitySchemes": {
      "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "`Authorization: Bearer <token>` (`--token` / `FERRY_TOKEN`)."
      },
      "cookie": {
        "type": "apiKey",
        "in": "cookie",
        "name": "ferry_session",
        "description": "The session cookie set by `POST /api/v1/session`; state-changing requests must also send `X-Requested-With: ferry`."
      }
    }
  }
}
"""#
}
