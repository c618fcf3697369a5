int wb_pch_host_anchor = 0;
