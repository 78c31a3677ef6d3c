#pragma once
// PRINT against a cluster in two steps, so that a server can refuse the statement before it
// starts a response: the topic checked as ksqlDB checks it, then its records read and written as
// lines (topic_statements.cpp). The engine's own PRINT is the two in a row.
#include <string>

#include "sql/engine/topic_access.h"
#include "sql/parser/ast.h"

namespace oxbow::sql {

// The topic `print` (of the statement `text`) reads, its name as written (an unquoted name keeps
// its case, as in ksqlDB), once the cluster has it and INTERVAL is at least 1; throws SqlError
// with ksqlDB's message otherwise (naming the topics that differ only in case).
std::string checked_print_topic(TopicAccess& access, const parser::Print& print,
                                const std::string& text);

// `topic`'s records as PRINT writes them, each line handed to `output.line` as it comes, until
// the LIMIT, `output.stop`, or (`output.end_when_caught_up` and no LIMIT) the topic's end.
void print_records(TopicAccess& access, const std::string& topic, const parser::Print& print,
                   const PrintOutput& output);

}  // namespace oxbow::sql
