//! 16550 UART on COM1, the standalone console.

use uart_16550::SerialPort;

const COM1: u16 = 0x3f8;

pub struct Serial(SerialPort);

impl Serial {
    pub fn com1() -> Self {
        // SAFETY: COM1 is the standard PC serial port; only the console owns it.
        let mut port = unsafe { SerialPort::new(COM1) };
        port.init();
        Serial(port)
    }

    pub fn write_bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                self.0.send(b'\r');
            }
            self.0.send(b);
        }
    }
}
