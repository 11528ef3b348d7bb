//! The strict reader's state machine: one pass over the text, every rule of the module's
//! header checked where its byte is read.

use std::collections::HashSet;

use super::{MAX_DEPTH, MAX_MEMBERS, MAX_VALUES, SyntaxError, Value, excerpt};

pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) text: &'a str,
    pub(super) pos: usize,
    /// Values read so far, against `MAX_VALUES`.
    pub(super) values: usize,
}

impl Reader<'_> {
    pub(super) fn error(&self, reason: impl Into<String>) -> SyntaxError {
        SyntaxError::new(self.pos, reason)
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub(super) fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    pub(super) fn expect(&mut self, byte: u8) -> Result<(), SyntaxError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected '{}'", byte as char)))
        }
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("JSON nested deeper than {MAX_DEPTH} levels")));
        }
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err(self.error(format!("a document with more than {MAX_VALUES} values")));
        }
        match self.peek() {
            None => Err(self.error("unexpected end of input")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self
                .string()
                .map(Value::String)
                .map_err(|e| e.in_string(false)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    pub(super) fn literal(&mut self, word: &str, value: Value) -> Result<Value, SyntaxError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("unexpected character"))
        }
    }

    pub(super) fn object(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.pos += 1;
        let mut members: Vec<(String, Value)> = Vec::new();
        // Offsets objects can hold a million partitions: duplicate detection must stay linear.
        let mut seen: HashSet<String> = HashSet::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a member name"));
            }
            let name_at = self.pos;
            let name = self.string().map_err(|e| e.in_string(true))?;
            if !seen.insert(name.clone()) {
                return Err(SyntaxError::new(
                    name_at,
                    if name.chars().all(|c| !c.is_control()) && name.len() <= 60 {
                        format!("Duplicate field '{name}'")
                    } else {
                        format!("Duplicate field {}", excerpt(&name))
                    },
                ));
            }
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            let value = self
                .value(depth + 1)
                .map_err(|e| e.under(|| format!(".{name}")))?;
            if members.len() == MAX_MEMBERS {
                return Err(SyntaxError::new(
                    name_at,
                    format!("an object with more than {MAX_MEMBERS} members"),
                ));
            }
            members.push((name, value));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    pub(super) fn array(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_whitespace();
            if items.len() == MAX_MEMBERS {
                return Err(self.error(format!("an array with more than {MAX_MEMBERS} items")));
            }
            let index = items.len();
            items.push(
                self.value(depth + 1)
                    .map_err(|e| e.under(|| format!("[{index}]")))?,
            );
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    pub(super) fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("malformed number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("malformed number"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("malformed number"));
            }
            self.digits();
        }
        Ok(Value::Number(self.text[start..self.pos].to_owned()))
    }

    pub(super) fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    pub(super) fn string(&mut self) -> Result<String, SyntaxError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run_start = self.pos;
            while let Some(byte) = self.peek() {
                if byte == b'"' || byte == b'\\' || byte < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The input is a &str and we only stop on ASCII bytes, so this slice is valid UTF-8.
            out.push_str(&self.text[run_start..self.pos]);
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    out.push(self.escape()?);
                }
                Some(_) => return Err(self.error("unescaped control character in string")),
            }
        }
    }

    pub(super) fn escape(&mut self) -> Result<char, SyntaxError> {
        let Some(byte) = self.peek() else {
            return Err(self.error("unterminated string"));
        };
        self.pos += 1;
        Ok(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(),
            _ => return Err(self.error("invalid escape sequence")),
        })
    }

    pub(super) fn unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.bytes[self.pos..].starts_with(b"\\u") {
                    return Err(self.error("lone surrogate in \\u escape"));
                }
                self.pos += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error("lone surrogate in \\u escape"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.error("lone surrogate in \\u escape")),
            other => other,
        };
        char::from_u32(code).ok_or_else(|| self.error("invalid \\u escape"))
    }

    pub(super) fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("truncated \\u escape"))?;
        let mut code = 0u32;
        for &digit in digits {
            let nibble = (digit as char)
                .to_digit(16)
                .ok_or_else(|| self.error("invalid \\u escape"))?;
            code = code * 16 + nibble;
        }
        self.pos += 4;
        Ok(code)
    }
}
